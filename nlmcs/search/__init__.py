"""Planners: Monte-Carlo search with a learned value network (Branavan et al. 2011), UCT, and the
roll-out policies they share. `methods.make_planner` builds any of them by name."""
