"""Ablations: methods x roll-out budgets x paired game seeds, run on any executor, stored game by
game, and reported as the papers' tables with paired tests and plots (`nlmcs ablation`)."""
