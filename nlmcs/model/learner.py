"""Online updates of the value network from roll-out rewards (Branavan et al. 2011, eqs. 2-3).

The update rules are spelled out in `nlmcs.model.reference` (`update`), which the numpy backend
runs; the compiled backend runs the same rules in one call per roll-out
(`nlmcs.model.kernels.sweeps`) over the rows `nlmcs.model.batch` stacks. This module picks the
reward each roll-out's output layer learns (the target) and hands the roll-out to one or the
other.

With `ModelConfig.center` the output layer learns R - b, b the mean reward of the step's earlier
roll-outs; the first roll-out of a step has no earlier ones, so it only counts its reward and
learns nothing (its raw reward would be several times the size of every later, centred, target,
and under `persist="hidden"` a push towards whatever it played would build up over a game).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nlmcs.model import reference
from nlmcs.model.batch import Batch, build, from_tables
from nlmcs.model.compiled import sweeps
from nlmcs.model.kernels.sweep_inputs import CONSISTENT, RELEASE, Rates, SharedPhi, Tables
from nlmcs.model.network import Decision, ValueNetwork, decisions_of


@dataclass(frozen=True)
class Decisions:
    """A roll-out's datapoints as the numpy reference learns them: (signature, y, z) each."""

    items: tuple


def update(net: ValueNetwork, decisions: Sequence[Decision], reward: float) -> None:
    """Apply `passes` sweeps of the online updates for one roll-out's datapoints."""
    learn(net, prepare(net, decisions), reward)


def prepare(net: ValueNetwork, datapoints: Sequence) -> Batch | Decisions | None:
    """What one roll-out's datapoints (`Decision`s and `DrawnRun`s, in the order drawn) learn
    from. It does not depend on the weights, so the process that played the roll-out prepares
    it once and every replica of the network learns from it."""
    if not datapoints:
        return None
    if net.compiled and net.tables is not None and net.config.hidden_update != "expected":
        found = from_tables(net.rows, net.tables, datapoints)
        if found is not None:
            return found
    decisions = decisions_of(datapoints)
    if net.compiled:
        return build(net.rows, decisions)
    return Decisions(tuple((d.sig, d.y, d.z) for d in decisions))


def target(net: ValueNetwork, reward: float) -> float | None:
    """The reward the output layer learns for this roll-out, None for none (see the module
    docstring); counts the reward into the step's mean."""
    if not net.config.center:
        return reward
    out = reward - net.reward_sum / net.reward_count if net.reward_count else None
    net.reward_sum += reward
    net.reward_count += 1
    return out


def learn(net: ValueNetwork, prepared: Batch | Decisions | None, reward: float) -> None:
    """Apply `passes` sweeps of the online updates for one prepared roll-out."""
    if prepared is None:
        return
    goal = target(net, reward)
    if goal is None:
        return
    if isinstance(prepared, Decisions):
        reference.update(net.rows, prepared.items, goal, net.weights)
    else:
        _compiled_sweeps(net, prepared, goal)
    net.weights_changed()


def _compiled_sweeps(net: ValueNetwork, batch: Batch, goal: float) -> None:
    """The sweeps in one compiled call (`sweeps.shared_sweeps`, or `sweeps.expected_sweeps`
    under the `expected` rule, which rescores every candidate row from `batch.row_q`)."""
    cfg = net.config
    rates = Rates(
        passes=cfg.passes, target=goal,
        rule=CONSISTENT if cfg.hidden_update == "consistent" else RELEASE, alpha=cfg.alpha,
        l2=cfg.l2, h_alpha=cfg.hidden_rates[0], h_l2=cfg.hidden_rates[1],
        temperature=cfg.temperature)
    tables = Tables(net.u, net.v, net.w)
    batch = batch.restored(net.rows)
    if batch.row_q is not None:
        sweeps().expected_sweeps(rates, batch.f, batch.cand, batch.phi, batch.labels,
                                 batch.row_q, tables)
    else:
        sweeps().shared_sweeps(rates, batch.f, batch.cand, batch.shared or _NO_PHI,
                               batch.labels, tables)


_INTS = np.zeros(0, np.int64)
_NO_PHI = SharedPhi(_INTS, np.zeros(0), _INTS, np.zeros(1, np.int64), _INTS, _INTS, _INTS,
                    np.zeros(0), _INTS)
"""The relevance rows of a model without a hidden layer (linear): none."""
