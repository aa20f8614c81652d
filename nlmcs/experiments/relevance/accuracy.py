"""Relevance accuracy against decoys (Branavan, Silver & Barzilay 2011): does the model rank the
manual's sentences above sentences of an unrelated text?

The decoy text is mixed into the manual at random positions (`decoys.combine`, seeded), games of
a text method are played reading the mixed manual, and for every decision with at least one
candidate sentence the arg-max of the relevance distribution is classed as a manual sentence, a
decoy or NULL. Sentences whose probabilities tie at the top (to the log's six decimals) are drawn
from at random (seeded): the log lists the top 20 (and every sentence tied with the last) by a
stable sort, so its order among ties is document order, not the model's. When every listed
sentence ties, the decision had more candidates than the log lists, and the probability left
over is theirs at the same value, the draw is over all of them (and NULL). Chance is the manual
share of the sentences the model offered at that decision (its candidates after
`max_sentences`), not of every sentence holding the agent's word. The paper reports 71.8%
overall (about 95% early in the game) for manual / (manual + decoy); here that is `accuracy`,
next to its chance level and the three shares, which sum to 1. A decision whose relevance is
uniform (entropy at least 0.99, top at most 1.25x uniform) selects nothing, so its pick is drawn
among all offered sentences and NULL (`uniform_share` counts them). Measuring `text` and
`random-text` on the same games, decoy positions and ties gives the part of the accuracy that
reading could claim: text minus twin (`compare`).

Library side of `nlmcs relevance accuracy`.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.experiments.relevance.decoys import combine, decoy_ids, load_decoys
from nlmcs.experiments.relevance.log import read_log
from nlmcs.experiments.relevance.measures import decision_relevance
from nlmcs.files import write_atomic
from nlmcs.seeds import game_seed

log = logging.getLogger(__name__)

CSV_NAME, PNG_NAME, SUMMARY_NAME, GAMES_DIR = "accuracy.csv", "accuracy.png", "summary.json", \
    "games"
_TIES = 0x7135  # the stream of a seed that breaks ties (the decoys' positions draw from another)
COLUMNS = ("step", "decisions", "manual_share", "decoy_share", "null_share", "accuracy",
           "chance_accuracy", "uniform_share")


@dataclass
class Tally:
    """Decisions of one step (or all), with the share of each class of arg-max sentence."""

    decisions: int = 0
    manual: float = 0.0
    decoy: float = 0.0
    null: float = 0.0
    chance: float = 0.0  # sum over decisions of the manual share of the offered sentences
    chance_n: int = 0
    uniform: int = 0  # decisions whose relevance is uniform (their pick is a uniform draw)

    def add(self, manual: float, decoy: float, null: float, chance: float | None,
            uniform: bool = False) -> None:
        self.decisions += 1
        self.uniform += bool(uniform)
        self.manual += manual
        self.decoy += decoy
        self.null += null
        if chance is not None:
            self.chance += chance
            self.chance_n += 1

    def row(self, step) -> dict:
        n = max(self.decisions, 1)
        sentences = self.manual + self.decoy
        return {
            "step": step, "decisions": self.decisions,
            "manual_share": round(self.manual / n, 6), "decoy_share": round(self.decoy / n, 6),
            "null_share": round(self.null / n, 6),
            "accuracy": round(self.manual / sentences, 6) if sentences > 0 else None,
            "chance_accuracy": round(self.chance / self.chance_n, 6) if self.chance_n else None,
            "uniform_share": round(self.uniform / n, 6),
        }  # fmt: skip


@dataclass
class AccuracyResult:
    rows: list[dict]  # one per step, then step "all"
    summary: dict
    csv: Path
    png: Path
    logs: list[Path] = field(default_factory=list)


def relevance_accuracy(*, game, manual, decoys, out: str | Path, method: str = "text",
                       games: int = 10, steps: int = 50, seed: int = 0,
                       opponent: str = "builtin", search_config=None, model_config=None,
                       on_game: Callable[[int, Path], None] | None = None) -> AccuracyResult:
    """Play `games` games (game i from `game_seed(seed, i)`) of `method` reading `manual` with the
    sentences of the text at `decoys` mixed in at positions drawn with `seed` (ties are drawn
    with it too); write each game's decision log under out/games/, and accuracy.csv,
    accuracy.png and summary.json under `out`."""
    from nlmcs.experiments.play import make_player, play
    from nlmcs.methods import get_method, method_model, method_text
    from nlmcs.model.config import ModelConfig
    from nlmcs.model.manuals import load_index, resolve_manual

    kind = get_method(method)
    if kind.reads == "nothing":
        raise ValueError(f"method {method!r} reads no text")
    model_config = model_config or ModelConfig()
    mixed = combine(manual=resolve_manual(manual), decoys=load_decoys(decoys), seed=seed)
    text = method_text(method, mixed)
    out = Path(out)
    (out / GAMES_DIR).mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(games):
        s = game_seed(seed, i)
        path = out / GAMES_DIR / f"game-{s}.jsonl"
        planner = make_player(method, game=game, opponent=opponent, seed=s, manual=text,
                              search_config=search_config, model_config=model_config,
                              log_decisions=True)  # fmt: skip
        play(game=game, planner=planner, method=method, opponent=opponent, seed=s, steps=steps,
             log_path=path, log_states=True,
             log_header={"manual": mixed.name, "decoys": mixed.meta["decoys"],
                         "model": method_model(method, model_config).to_dict()})  # fmt: skip
        paths.append(path)
        if on_game is not None:
            on_game(i, path)
    index = load_index(text, min_count=model_config.min_count, meaning=model_config.meaning)
    config = dataclasses.replace(model_config, kind=kind.model)
    rows = measure(paths=paths, decoys=decoy_ids(mixed), offered=offered_sentences(config, index),
                   seed=seed)
    return _write(out, rows, paths, method=method, mixed=mixed, games=games, steps=steps,
                  seed=seed)


def offered_sentences(config, index) -> Callable[[dict], np.ndarray]:
    """The sentences the model offered at a logged decision (its candidates for the record's
    agent, action and state words), asked of the model itself, for a log cut short."""
    from nlmcs.model.features import Signature
    from nlmcs.model.network import ValueNetwork

    net = ValueNetwork(config, index)
    found: dict[Signature, np.ndarray] = {}

    def offered(rec: dict) -> np.ndarray:
        sig = Signature(tuple(rec.get("agent_labels") or ()),
                        tuple(rec.get("action_labels") or ()), "",
                        tuple(rec.get("state_labels") or ()))  # fmt: skip
        if sig not in found:
            ids, _ = net.relevance(sig)
            found[sig] = ids[ids >= 0]
        return found[sig]

    return offered


def measure(*, paths: list[Path], decoys: Collection[int],
            offered: Callable[[dict], np.ndarray] | None = None, seed: int = 0) -> list[dict]:
    """Per-step rows (and a last row, step "all") from decision logs of a mixed manual whose
    decoy sentences have the ids `decoys`. `offered(record)` gives the sentences the model
    offered where the log lists only some (without it, such a decision's chance is unknown and
    its ties are drawn among the listed ones); ties at the top are drawn with `seed`."""
    decoys = frozenset(decoys)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), _TIES]))
    by_step: dict[int, Tally] = {}
    total = Tally()
    for path in paths:
        for rec in read_log(path).decisions:
            sents = rec.get("sentences")
            n = rec.get("num_candidates", len(sents or ()))
            if not sents or n < 2:
                continue  # no candidate sentence: nothing to choose between
            listed = [int(s["id"]) for s in sents]
            if len(listed) >= n:
                shown = np.array([i for i in listed if i >= 0], dtype=np.int64)
            else:
                shown = offered(rec) if offered is not None else None
            found = decision_relevance(rec)
            uniform = found is not None and found[2]
            pick = _argmax(sents, n, shown, rng, uniform=uniform)
            shares = (float(pick >= 0 and pick not in decoys), float(pick in decoys),
                      float(pick < 0))
            chance = None
            if shown is not None and len(shown):
                chance = 1.0 - sum(int(i) in decoys for i in shown) / len(shown)
            by_step.setdefault(rec["step"], Tally()).add(*shares, chance, uniform)
            total.add(*shares, chance, uniform)
    rows = [tally.row(t) for t, tally in sorted(by_step.items())]
    rows.append(total.row("all"))
    return rows


def _argmax(sents: list[dict], num_candidates: int, offered: np.ndarray | None,
            rng: np.random.Generator, *, uniform: bool = False) -> int:
    """The id of the arg-max sentence (-1: NULL), drawn at random among those tied at the top.
    When every listed one ties and the log was cut, the ones it left out tie too only if the
    probability they share is theirs at the top value each (the log lists whole ties since
    2026-11-26, so then they are lower): then the draw is among all offered ones and NULL.
    A uniform decision picks nothing (its arg-max is drift, yet on the Civ II manual the
    default model's near-uniform arg-max was a manual sentence 99% of the time against a
    chance of 80%): the draw is among all offered ones and NULL, which scores chance."""
    top = sents[0]["p"]
    tied = [int(s["id"]) for s in sents if s["p"] == top]
    left_out = num_candidates - len(sents)
    if uniform:
        listed = [int(s["id"]) for s in sents]
        tied = [*(int(i) for i in offered), -1] if offered is not None else listed
    elif len(tied) == len(sents) and left_out > 0 and offered is not None:
        rest = 1.0 - sum(s["p"] for s in sents)  # probabilities are logged to 6 decimals
        if abs(rest - left_out * top) <= 1e-6 * num_candidates:
            tied = [*(int(i) for i in offered), -1]
    return tied[int(rng.integers(len(tied)))]


def compare(summaries: dict[str, dict]) -> dict | None:
    """Text minus its twin, when both were measured: accuracy, and accuracy above chance."""
    text, twin = summaries.get("text"), summaries.get("random-text")
    if text is None or twin is None:
        return None
    a, b = text["overall"], twin["overall"]
    if a["accuracy"] is None or b["accuracy"] is None:
        return None
    out = {"accuracy": round(a["accuracy"] - b["accuracy"], 6)}
    if a["chance_accuracy"] is not None and b["chance_accuracy"] is not None:
        out["above_chance"] = round((a["accuracy"] - a["chance_accuracy"])
                                    - (b["accuracy"] - b["chance_accuracy"]), 6)
    return out


def check_settings(out: str | Path, settings: dict) -> None:
    """Refuse an --out folder holding the results of other settings (they would be replaced
    without a word), or of settings it did not record; the same settings play the same games
    again."""
    from nlmcs.runs import identity_changes

    path = Path(out) / SUMMARY_NAME
    if not path.exists():
        return
    try:
        held = json.loads(path.read_text(encoding="utf-8")).get("settings")
    except (OSError, ValueError, AttributeError):
        held = None
    if not isinstance(held, dict):
        raise UserInputError(f"{out}: holds relevance accuracy results whose settings it does "
                             "not record; give another --out")
    changes = identity_changes(held, json.loads(json.dumps(settings, default=str)))
    if changes:
        raise UserInputError(f"{out}: holds relevance accuracy of other settings "
                             f"({'; '.join(changes[:4])}); give another --out")


def write_comparison(out: str | Path, summaries: dict[str, dict],
                     settings: dict | None = None) -> dict:
    """out/summary.json: the settings, each method's summary and, with text and random-text,
    text minus twin."""
    combined = {"settings": json.loads(json.dumps(settings or {}, default=str)),
                "methods": summaries, "text_minus_twin": compare(summaries)}
    write_atomic(Path(out) / SUMMARY_NAME, json.dumps(combined, indent=2) + "\n")
    return combined


def _write(out: Path, rows: list[dict], paths: list[Path], *, method: str, mixed, games: int,
           steps: int, seed: int) -> AccuracyResult:
    from nlmcs.experiments.relevance.plots import accuracy_plot

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in rows)
    write_atomic(out / CSV_NAME, buf.getvalue())
    per_step = rows[:-1]
    info = mixed.meta["decoys"]
    title = (f"Relevance accuracy of {method}: {info['manual']} + {info['decoy_sentences']} "
             f"decoy sentences ({games} games x {steps} steps)")
    png = accuracy_plot(steps=[r["step"] for r in per_step],
                        manual=[r["manual_share"] for r in per_step],
                        decoy=[r["decoy_share"] for r in per_step],
                        null=[r["null_share"] for r in per_step],
                        accuracy=[r["accuracy"] for r in per_step],
                        chance=[r["chance_accuracy"] for r in per_step], title=title)
    write_atomic(out / PNG_NAME, png)
    quarter = max(1, len(per_step) // 4)
    summary = {"method": method, "manual": info["manual"], "decoys": info["decoys"],
               "manual_sentences": info["manual_sentences"],
               "decoy_sentences": info["decoy_sentences"], "seed": seed,
               "decoy_seed": info["seed"], "tie_seed": seed, "games": games, "steps": steps,
               "overall": rows[-1], "early": _pool(per_step[:quarter]),
               "late": _pool(per_step[-quarter:]),
               "logs": [str(p) for p in paths]}  # fmt: skip
    write_atomic(out / SUMMARY_NAME, json.dumps(summary, indent=2) + "\n")
    return AccuracyResult(rows, summary, out / CSV_NAME, out / PNG_NAME, paths)


def _pool(rows: list[dict]) -> dict:
    """The shares of several steps' rows pooled by their decisions."""
    n = sum(r["decisions"] for r in rows)
    if not n:
        return {"steps": [], "decisions": 0}
    pooled = {k: sum(r[k] * r["decisions"] for r in rows) / n
              for k in ("manual_share", "decoy_share", "null_share", "uniform_share")}
    sentences = pooled["manual_share"] + pooled["decoy_share"]
    known = [r for r in rows if r["chance_accuracy"] is not None]
    chance = (sum(r["chance_accuracy"] * r["decisions"] for r in known)
              / sum(r["decisions"] for r in known)) if known else None
    return {"steps": [r["step"] for r in rows], "decisions": n,
            **{k: round(v, 6) for k, v in pooled.items()},
            "accuracy": round(pooled["manual_share"] / sentences, 6) if sentences else None,
            "chance_accuracy": None if chance is None else round(chance, 6)}
