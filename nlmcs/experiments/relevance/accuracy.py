"""Relevance accuracy against decoys (Branavan, Silver & Barzilay 2011): does the model rank the
manual's sentences above sentences of an unrelated text?

The decoy text is mixed into the manual (`decoys.combine`), games of a text method are played
reading the mixed manual, and for every decision with at least one candidate sentence the
arg-max of the relevance distribution (the first of the logged sentences, which are sorted by
probability) is classed as a manual sentence, a decoy or NULL. Probabilities equal at the top
(to the log's six decimals) share the decision equally; when all logged sentences tie and the
agent has more candidates than the log lists, the decision is shared in proportion to the
agent's candidates. The paper reports 71.8% overall (about 95% early in the game) for
manual / (manual + decoy); here that is `accuracy`, next to its chance level (the manual share
of the agents' candidate sentences) and the three shares, which sum to 1.

Library side of `nlmcs relevance accuracy`.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nlmcs.experiments.relevance.decoys import combine, first_decoy, load_decoys
from nlmcs.experiments.relevance.log import read_log
from nlmcs.files import write_atomic

log = logging.getLogger(__name__)

CSV_NAME, PNG_NAME, SUMMARY_NAME, GAMES_DIR = "accuracy.csv", "accuracy.png", "summary.json", \
    "games"
COLUMNS = ("step", "decisions", "manual_share", "decoy_share", "null_share", "accuracy",
           "chance_accuracy")


@dataclass
class Tally:
    """Decisions of one step (or all), with the share of each class of arg-max sentence."""

    decisions: int = 0
    manual: float = 0.0
    decoy: float = 0.0
    null: float = 0.0
    chance: float = 0.0  # sum over decisions of the manual share of the agent's candidates
    chance_n: int = 0

    def add(self, manual: float, decoy: float, null: float, chance: float | None) -> None:
        self.decisions += 1
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
    """Play `games` games (seeds seed, seed+1, ...) of `method` reading `manual` with the
    sentences of the text at `decoys` mixed in; write each game's decision log under
    out/games/, and accuracy.csv, accuracy.png and summary.json under `out`."""
    from nlmcs.experiments.play import make_player, play
    from nlmcs.model.config import ModelConfig
    from nlmcs.model.manuals import load_index, random_twin, resolve_manual
    from nlmcs.search.methods import get_method

    reads = get_method(method).reads
    if reads == "nothing":
        raise ValueError(f"method {method!r} reads no text")
    model_config = model_config or ModelConfig()
    mixed = combine(manual=resolve_manual(manual), decoys=load_decoys(decoys))
    text = random_twin(mixed) if reads == "random-twin" else mixed
    out = Path(out)
    (out / GAMES_DIR).mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(games):
        s = seed + i
        path = out / GAMES_DIR / f"game-{s}.jsonl"
        planner = make_player(method, game=game, opponent=opponent, seed=s, manual=text,
                              search_config=search_config, model_config=model_config,
                              log_decisions=True)  # fmt: skip
        play(game=game, planner=planner, method=method, opponent=opponent, seed=s, steps=steps,
             log_path=path, log_states=True,
             log_header={"manual": mixed.name, "decoys": mixed.meta["decoys"],
                         "model": model_config.to_dict()})  # fmt: skip
        paths.append(path)
        if on_game is not None:
            on_game(i, path)
    index = load_index(text, min_count=model_config.min_count)
    cap = model_config.max_sentences if model_config.rank_sentences == "document" else None
    rows = measure(paths=paths, first_decoy=first_decoy(mixed), index=index, cap=cap)
    return _write(out, rows, paths, method=method, mixed=mixed, games=games, steps=steps)


def measure(*, paths: list[Path], first_decoy: int, index=None, cap: int | None = None
            ) -> list[dict]:
    """Per-step rows (and a last row, step "all") from decision logs of a mixed manual whose
    decoys start at sentence id `first_decoy`; `index` (the model's `ManualIndex` of it) gives
    the candidates' composition for ties and the chance level."""
    by_step: dict[int, Tally] = {}
    total = Tally()
    composition: dict[tuple, tuple[int, int] | None] = {}
    for path in paths:
        for rec in read_log(path).decisions:
            sents = rec.get("sentences")
            if not sents or rec.get("num_candidates", len(sents)) < 2:
                continue  # no candidate sentence: nothing to choose between
            agent = tuple(rec.get("agent_labels") or ())
            if agent not in composition:
                composition[agent] = _composition(index, agent, cap, first_decoy)
            comp = composition[agent]
            shares = _argmax_shares(sents, rec.get("num_candidates", len(sents)), comp,
                                    first_decoy)
            chance = comp[0] / (comp[0] + comp[1]) if comp and sum(comp) else None
            by_step.setdefault(rec["step"], Tally()).add(*shares, chance)
            total.add(*shares, chance)
    rows = [tally.row(t) for t, tally in sorted(by_step.items())]
    rows.append(total.row("all"))
    return rows


def _composition(index, agent: tuple, cap, first: int) -> tuple[int, int] | None:
    """(manual, decoy) candidate sentences of an agent's words, or None without an index."""
    if index is None or not agent:
        return None
    ids = index.candidates(agent, cap)
    decoy = int((ids >= first).sum())
    return len(ids) - decoy, decoy


def _argmax_shares(sents: list[dict], num_candidates: int, comp, first: int
                   ) -> tuple[float, float, float]:
    """(manual, decoy, NULL) credit of one decision: 1 to the class of the arg-max sentence,
    shared among sentences tied at the top."""
    top = sents[0]["p"]
    tied = [s for s in sents if s["p"] == top]
    if len(tied) == len(sents) and num_candidates > len(sents) and comp is not None:
        n = comp[0] + comp[1] + 1  # every candidate ties: shares by the candidates (and NULL)
        return comp[0] / n, comp[1] / n, 1 / n
    m = sum(1 for s in tied if 0 <= s["id"] < first)
    d = sum(1 for s in tied if s["id"] >= first)
    return m / len(tied), d / len(tied), (len(tied) - m - d) / len(tied)


def _write(out: Path, rows: list[dict], paths: list[Path], *, method: str, mixed, games: int,
           steps: int) -> AccuracyResult:
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
               "manual_sentences": info["first_decoy"],
               "decoy_sentences": info["decoy_sentences"], "games": games, "steps": steps,
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
              for k in ("manual_share", "decoy_share", "null_share")}
    sentences = pooled["manual_share"] + pooled["decoy_share"]
    known = [r for r in rows if r["chance_accuracy"] is not None]
    chance = (sum(r["chance_accuracy"] * r["decisions"] for r in known)
              / sum(r["decisions"] for r in known)) if known else None
    return {"steps": [r["step"] for r in rows], "decisions": n,
            **{k: round(v, 6) for k, v in pooled.items()},
            "accuracy": round(pooled["manual_share"] / sentences, 6) if sentences else None,
            "chance_accuracy": None if chance is None else round(chance, 6)}
