"""The relevance report of an ablation: what each text arm read over all its games, and the
text arm against its random-text twin game by game (`nlmcs relevance report RUN_DIR`).

The games' logs are the ones `nlmcs ablation run --log-decisions` kept in the run folder
(`decisions/ARM/game-I.jsonl`); game i of every arm was played on one seed, so two arms compare
pair by pair. Arms whose methods read no text are listed and left out of the rest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation.store import LOGS_NAME, RUN_NAME
from nlmcs.experiments.relevance import measures, plots, summary
from nlmcs.experiments.relevance.log import DecisionLog, check_manual, read_log
from nlmcs.experiments.relevance.report import (
    compare_section,
    esc,
    page,
    pos_section,
    unit_section,
)
from nlmcs.files import write_atomic
from nlmcs.methods import get_method


@dataclass
class ArmLogs:
    """One arm's kept logs, by game index."""

    arm: str
    method: str
    games: dict[int, DecisionLog]

    def pooled(self) -> DecisionLog:
        """Its games' decisions as one log, labelled by the arm (for grids and counts)."""
        logs = [self.games[i] for i in sorted(self.games)]
        return measures.pooled(logs, path=Path(f"{self.arm}, {len(logs)} games"))


def read_run_logs(folder: Path) -> list[ArmLogs]:
    """Every arm's kept logs; a folder that is no run, or keeps no logs, is refused in a line."""
    folder = Path(folder)
    if not (folder / RUN_NAME).is_file():
        raise UserInputError(f"{folder}: no {RUN_NAME}, not an ablation run folder")
    root = folder / LOGS_NAME
    if not root.is_dir() or not any(root.glob("*/game-*.jsonl")):
        raise UserInputError(f"{folder}: keeps no decision logs (run `nlmcs ablation run ... "
                             "--log-decisions`; games already stored keep none)")
    try:  # the run's own arm order, then any other kept folders
        order = [str(a) for a in json.loads((folder / RUN_NAME).read_text("utf-8"))["spec"]["arms"]]
    except (OSError, ValueError, KeyError, TypeError):
        order = []
    dirs = sorted((p for p in root.iterdir() if p.is_dir()),
                  key=lambda p: (order.index(p.name) if p.name in order else len(order), p.name))
    arms = []
    for arm_dir in dirs:
        games = {}
        for path in sorted(arm_dir.glob("game-*.jsonl")):
            try:
                index = int(path.stem.split("-", 1)[1])
            except ValueError:
                raise UserInputError(f"{path}: not a kept game log (game-I.jsonl)") from None
            games[index] = read_log(path)
        if games:
            first = games[min(games)]
            method = first.method or arm_dir.name.split("@")[0]
            arms.append(ArmLogs(arm_dir.name, method, games))
    return arms


def default_pair(arms: Sequence[ArmLogs]) -> tuple[str, str] | None:
    """The first arm reading the manual and the first reading its random twin, if both ran."""
    reading = [a.arm for a in arms if _reads(a.method) == "manual"]
    twin = [a.arm for a in arms if _reads(a.method) == "random-twin"]
    return (reading[0], twin[0]) if reading and twin else None


def _reads(method: str) -> str:
    try:
        return get_method(method).reads
    except UserInputError:
        return "nothing"


def write_run_report(folder: Path, *, out: Path, pair: tuple[str, str] | None = None,
                     seed: int = 0, manual=None) -> Path:
    """Write the report of the run in `folder` to `out` (atomically); `pair` names the two arms
    compared (default: `default_pair`); with `manual` (a `StoredManual`), the logs of the arm
    reading it are checked to be that manual's."""
    arms = read_run_logs(folder)
    if manual is not None:
        for a in arms:
            if _reads(a.method) == "manual":
                for lg in a.games.values():
                    check_manual(lg, manual=manual)
    by_name = {a.arm: a for a in arms}
    if pair is not None:
        for name in pair:
            if name not in by_name:
                raise UserInputError(f"{folder}: no kept logs of arm {name!r} (kept: "
                                     f"{', '.join(by_name)})")
    else:
        pair = default_pair(arms)
    text = [a for a in arms if any(lg.has_text for lg in a.games.values())]
    if not text:
        raise UserInputError(f"{folder}: no kept log holds sentences (the arms "
                             f"{', '.join(by_name)} read no text)")
    pooled = [a.pooled() for a in text]
    sections = [("games", "Games", _games_table(arms, folder))]
    if pair is not None:
        a, b = by_name[pair[0]], by_name[pair[1]]
        common = sorted(set(a.games) & set(b.games))
        rows = measures.compare_games([a.games[i] for i in common],
                                      [b.games[i] for i in common], seed=seed)
        sections.append(("compare", f"{b.arm} vs {a.arm}, game by game",
                         compare_section(rows, [], paired=True, names=[a.arm, b.arm])))
    sections += [
        ("entropy", "Relevance entropy over the game", _entropy(text, pooled)),
        ("units", "Relevance by unit type, sentence and step", unit_section(pooled)),
        ("labels", "Word labels by part of speech", pos_section(pooled)),
    ]
    title = f"Relevance over the ablation {Path(folder).name}"
    write_atomic(out, page(title, sections))
    return Path(out)


def _games_table(arms: Sequence[ArmLogs], folder: Path) -> str:
    try:
        ident = json.loads((Path(folder) / RUN_NAME).read_text(encoding="utf-8"))["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        ident = {}  # the games table of the logs stands without it
    rows = []
    for a in arms:
        views = [summary.overview(lg) for lg in a.games.values()]
        ends = [lg.end for lg in a.games.values() if lg.end is not None]
        wins = sum(1 for e in ends if e.get("winner") == 0)
        ent = [v["mean entropy"] for v in views if v["mean entropy"] is not None]
        mean_ent = f"{sum(ent) / len(ent):.4f}" if ent else "-"
        rows.append(f"<tr><td>{esc(a.arm)}</td><td>{esc(a.method)}</td><td>{len(a.games)}</td>"
                    f"<td>{sum(v['decisions'] for v in views)}</td>"
                    f"<td>{sum(v['text decisions'] for v in views)}</td><td>{mean_ent}</td>"
                    f"<td>{wins}/{len(ends)}</td></tr>")
    search = ident.get("search") or {}
    facts = (f"seed {ident.get('seed', '?')}, {ident.get('steps', '?')} steps, opponent "
             f"{ident.get('opponent', '?')}, manual {ident.get('manual', '?')}, depth "
             f"{search.get('depth', '?')}")
    return (f'<p class="muted">{esc(facts)}; the games table of the run itself is in its '
            "summary.md.</p><table><tr><th>arm</th><th>method</th><th>games logged</th>"
            "<th>decisions</th><th>text decisions</th><th>mean entropy</th><th>wins</th></tr>"
            + "".join(rows) + "</table>")


def _entropy(arms: Sequence[ArmLogs], pooled: Sequence[DecisionLog]) -> str:
    series = {}
    for a, lg in zip(arms, pooled, strict=True):
        by_step = summary.entropy_by_step(lg)
        if by_step.get("all"):
            series[a.arm] = {"all": by_step["all"]}
    if not series:
        return '<p class="muted">No decision had two or more candidates.</p>'
    png = plots.entropy_plot(series)
    return (f'<img alt="relevance entropy by step" src="{plots.data_uri(png)}">'
            '<p class="muted">Mean over all games and agents of each step.</p>')
