"""The planted-sentence test: does relevance pick the one sentence that says which move wins?

The situation: the start of a `sacred-terrain` game (`nlmcs.games.civ.variants`) whose settlers
stand on the game's sacred terrain, where founding the city at once gives it two extra citizens.
The manual: the shipped guide (hundreds of ordinary sentences, 86 of them about settlers) plus
the variant's rule sentence in the paraphrase that names settlers, so that it is one of their
candidate sentences (the other paraphrases are not: candidates must hold the agent's word). One
real step of the text search from there, then the relevance of the settlers' "build city" move:
the planted sentence's probability over uniform (its *lift*), its rank, the top sentence's
lift and the normalised entropy; the same for the word-permuted twin of that manual, where the
planted sentence's place holds word salad (its lift is 0 when the copy is not a candidate).

Each run also reports what the step did to the weights, the diagnosis of docs/reading.md: how
far u (relevance) moved from where it started against w (output), and how many of the
candidates' relevance rows are distinct. Library side of `nlmcs relevance planted`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.files import write_csv_rows

VARIANT = "sacred-terrain"
PARAPHRASE = 3
"""The rule sentence's paraphrase that names settlers (`variant_manuals.PARAPHRASES`)."""
AGENT_KIND, ACTION_KIND = "settlers", "build_city"
LIFT_GOAL, TWIN_RATIO_GOAL = 5.0, 2.0
"""The issue's bar: the planted sentence at least 5x uniform and at least twice the lift of
the twin's copy of it, within one real step."""
ARMS = ("text", "twin")


@dataclass(frozen=True)
class PlantedCase:
    """The game, the state, the decisive move and the manual with its planted sentence."""

    game: object
    seed: int
    state: object
    agent: str
    action: object
    manual: object  # StoredManual with the rule sentence last
    planted: int  # its sentence id

    @property
    def sentence(self) -> str:
        return str(self.manual.sentences["text"].iloc[self.planted])


def sacred_starts(game, seeds: Sequence[int]) -> list[int]:
    """The seeds among `seeds` whose player-0 settlers start on the sacred terrain."""
    return [s for s in seeds if _settlers_on_sacred(game, s) is not None]


def _settlers_on_sacred(game, seed: int):
    state = game.new_initial_state(int(seed))
    sacred = game.tables.terrain_names[state.map.sacred]
    for agent, actions in state.agent_actions(0):
        if state.agent_labels(agent)[0] != AGENT_KIND or sacred not in state.state_labels(agent):
            continue
        found = [a for a in actions if a.kind == ACTION_KIND]
        if found:
            return state, agent, found[0], sacred
    return None


def planted_case(*, seed: int = 3, manual=None) -> PlantedCase:
    """The test's situation in the small-map sacred-terrain game of `seed` (its settlers must
    start on the sacred terrain) and the manual (default: the shipped guide) with the rule."""
    from nlmcs.games import make_game
    from nlmcs.model.manuals import resolve_manual
    from nlmcs.model.variant_manuals import GameRule, with_rule

    game = make_game("civ", preset="small", variant=VARIANT)
    found = _settlers_on_sacred(game, seed)
    if found is None:
        fits = ", ".join(map(str, sacred_starts(game, range(40))))
        raise UserInputError(f"--seed {seed}: the settlers of that game do not start on its "
                             f"sacred terrain; seeds below 40 whose do: {fits}")
    state, agent, action, sacred = found
    base = resolve_manual(manual)
    with_sentence = with_rule(base, GameRule(VARIANT, int(seed), sacred, sacred, PARAPHRASE))
    return PlantedCase(game, int(seed), state, agent, action, with_sentence,
                       len(with_sentence.sentences) - 1)


def measure(case: PlantedCase, *, arm: str, search_config, model_config, twin_seed: int = 0
            ) -> dict:
    """One real step of the text search on `case` reading the manual (`arm="text"`) or its
    twin shuffled with `twin_seed` ("twin"); the planted sentence's relevance after it."""
    from nlmcs.methods import make_planner, method_text
    from nlmcs.model.evaluator import normalised_entropy, relevance_is_uniform
    from nlmcs.model.features import signature

    if arm not in ARMS:
        raise ValueError(f"arm {arm!r}: choose from {ARMS}")
    text = case.manual if arm == "text" else method_text("random-text", case.manual,
                                                          twin_seed=twin_seed)
    model_config = replace(model_config, kind="text")
    planner = make_planner("text", game=case.game, manual=text, search_config=search_config,
                           model_config=model_config, seed=case.seed)
    try:
        t0 = time.perf_counter()
        planner.choose(case.state.clone(), 0, np.random.default_rng(case.seed))
        seconds = time.perf_counter() - t0
        net = planner.core.evaluator.net
        sig = signature(case.state, case.agent, case.action)
        ids, p = net.relevance(sig)
        start_u = _starting_u(net)
        u_moved = float(np.abs(net.u - start_u).sum())
        w_moved = float(np.abs(net.w).sum())
        u_max = float(np.abs(net.u).max())
        distinct = _distinct_rows(net, sig)
    finally:
        planner.close()
    here = np.flatnonzero(ids == case.planted)
    uniform_p = 1.0 / len(p)
    planted_p = float(p[here[0]]) if here.size else 0.0
    return {
        "arm": arm, "rollouts": search_config.rollouts, "depth": search_config.depth,
        "seed": case.seed, "twin_seed": twin_seed if arm == "twin" else "",
        "candidates": len(p) - 1, "distinct_rows": distinct,
        "planted_candidate": bool(here.size), "planted_p": round(planted_p, 6),
        "planted_lift": round(planted_p / uniform_p, 4),
        "planted_rank": int((p > planted_p).sum()) + 1 if here.size else "",
        "top_lift": round(float(p.max()) / uniform_p, 4),
        "entropy": round(normalised_entropy(p), 6), "uniform": relevance_is_uniform(p),
        "u_moved": round(u_moved, 6), "w_moved": round(w_moved, 6), "u_max": round(u_max, 6),
        "seconds": round(seconds, 2),
    }  # fmt: skip


def _starting_u(net) -> np.ndarray:
    """u as a real step starts it (`ValueNetwork.reset`): zeros, the relevance prior and the
    meaning prior."""
    u = np.zeros_like(net.u)
    u[net.prior_slots()] = net.config.relevance_prior
    u[net.meaning_slots()] = net.config.meaning_prior
    return u


def _distinct_rows(net, sig) -> int:
    """How many of the candidate sentences' relevance rows (phi) differ from each other."""
    slot, val, row = net.rows.relevance_rows(net.features(sig))
    rows: dict[int, list] = {}
    for s, v, r in zip(slot.tolist(), val.tolist(), row.tolist(), strict=True):
        rows.setdefault(r, []).append((s, v))
    null = len(net.features(sig).unit.sentences)
    return len({tuple(sorted(entries)) for r, entries in rows.items() if r != null})


@dataclass(frozen=True)
class Verdict:
    """The issue's bar on one text row and the twin row of the same budget."""

    text_lift: float
    twin_lift: float

    @property
    def passed(self) -> bool:
        return (self.text_lift >= LIFT_GOAL
                and self.text_lift >= TWIN_RATIO_GOAL * self.twin_lift)

    def line(self) -> str:
        ratio = "inf" if self.twin_lift == 0 else f"{self.text_lift / self.twin_lift:.2f}"
        return (f"planted sentence {self.text_lift:.2f}x uniform (goal >= {LIFT_GOAL:g}), "
                f"twin's copy {self.twin_lift:.2f}x, ratio {ratio} (goal >= "
                f"{TWIN_RATIO_GOAL:g}): {'PASS' if self.passed else 'FAIL'}")


def verdict(rows: Sequence[dict], rollouts: int) -> Verdict:
    by_arm = {r["arm"]: r for r in rows if r["rollouts"] == rollouts}
    return Verdict(float(by_arm["text"]["planted_lift"]), float(by_arm["twin"]["planted_lift"]))


def run_planted(*, seed: int, twin_seed: int, budgets: Sequence[int], search_config,
                model_config, manual=None, out: Path | None = None,
                on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """`measure` for both arms at each number of roll-outs in `budgets` (the depth and the
    rest from `search_config`); the rows are written to `out` (CSV) when given."""
    case = planted_case(seed=seed, manual=manual)
    rows = []
    for rollouts in budgets:
        cfg = replace(search_config, rollouts=int(rollouts))
        for arm in ARMS:
            row = measure(case, arm=arm, search_config=cfg, model_config=model_config,
                          twin_seed=twin_seed)
            rows.append(row)
            if on_row is not None:
                on_row(row)
    if out is not None:
        write_csv_rows(out, rows)
    return rows
