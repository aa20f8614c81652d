"""Does the reader advise what the advice audit found worth following?

For each rule of a manual's rules file (`nlmcs.advice.rules`) the reader is asked at every
decision of the built-in AI's games where the rule applies and the rule's move is legal: how much
more prior mass does it put on following the rule than a uniform pick would (log of the ratio;
for an `avoid` rule, the mass kept off the move). The audit measured each rule's worth (follow
minus break, in score points, at a horizon). Agreement is the rank correlation (Spearman) of the
two over the rules: a reader that read the advice well puts more mass on the rules that pay.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from nlmcs.errors import UserInputError


def audit_worth(folder: Path, turns: int) -> dict[str, float]:
    """Each rule's worth at `turns` from an audit's summary.csv."""
    path = Path(folder) / "summary.csv"
    if not path.is_file():
        raise UserInputError(f"{path}: no audit summary here; run `nlmcs advice audit` first")
    out = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            try:
                if int(row["turns"]) == turns:
                    out[row["rule"]] = float(row["worth"])
            except (KeyError, ValueError):
                raise UserInputError(f"{path}: not an audit summary (rule, turns, worth)") \
                    from None
    if not out:
        raise UserInputError(f"{path}: no rule measured at {turns} turns")
    return out


def rule_lifts(prior, rules, game, seeds, turns: int) -> dict[str, list[float]]:
    """Per rule, the log lift toward following it at every decision of player 0 (the built-in
    AI) where it applies, over the games of `seeds` to `turns`."""
    lifts: dict[str, list[float]] = {r.name: [] for r in rules}
    for seed in seeds:
        state = game.new_initial_state(seed)
        rng = np.random.default_rng(seed)
        policies = [game.policy("builtin") for _ in range(game.num_players)]
        while not state.is_terminal() and state.turn < turns:
            civ = state.state_labels("civ:0")
            for agent, actions in state.agent_actions(0):
                actions = list(actions)
                if len(actions) < 2:
                    continue
                agent_labels, state_labels = state.agent_labels(agent), state.state_labels(agent)
                applying = [r for r in rules if r.applies(agent_labels, state_labels, civ)]
                if not applying:
                    continue
                p = prior(state, agent, actions)
                labels = state.actions_labels(agent, actions)
                for rule in applying:
                    hit = np.array([not set(rule.action).isdisjoint(lab) for lab in labels])
                    if not hit.any() or hit.all():
                        continue
                    mass, share = float(p[hit].sum()), hit.mean()
                    lift = math.log(mass / share) if rule.recommends else \
                        math.log((1 - mass) / (1 - share))
                    lifts[rule.name].append(lift)
            joint = {pl: policies[pl].joint_action(state, pl, rng)
                     for pl in range(game.num_players)}
            state.apply_joint_actions(joint, rng)
    return lifts


def agreement_rows(lifts: dict[str, list[float]], worth: dict[str, float]) -> tuple[list, dict]:
    """(a row per rule, the rank correlation over rules seen at least once)."""
    from scipy.stats import spearmanr

    rows = []
    for name, values in lifts.items():
        rows.append({"rule": name, "decisions": len(values),
                     "lift": round(float(np.mean(values)), 4) if values else None,
                     "worth": worth.get(name)})
    usable = [r for r in rows if r["lift"] is not None and r["worth"] is not None]
    if len(usable) >= 3:
        rho, p = spearmanr([r["lift"] for r in usable], [r["worth"] for r in usable])
        stats = {"rules": len(usable), "spearman": round(float(rho), 3), "p": float(p)}
    else:
        stats = {"rules": len(usable), "spearman": None, "p": None}
    return rows, stats
