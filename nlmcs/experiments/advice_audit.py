"""What a manual's advice is worth without a reader: each rule followed vs broken, paired seeds.

For game i (seed `game_seed(S, i)`, as ablations draw theirs) the base player (the built-in AI,
or any search method) plays the opponent once as itself and, for every rule, once following it
and once breaking it (`nlmcs.advice.policy`). A game runs to the longest horizon, and its score
margin (player 0 minus the opponent) and result are read at every horizon on the way: the state
at turn 20 of a 100-turn game is the end state of a 20-turn game, since nothing in the rules
looks at the turn limit before it is reached. A game over early (one side eliminated) counts its
final state at the later horizons.

The run folder is the project's one run store (`nlmcs.runs`): `run.json` (what was played; a
folder of an older version keeps it in `audit.json`, still read) and `games.jsonl` (one line per
seed, all its arms, fsynced as it ends, a line cut by a crash dropped once under the folder's
lock), played by the one job loop (`nlmcs.jobs`), so a stopped audit resumes where it stopped;
the tables and the plot are rebuilt from those rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from contextlib import nullcontext
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np

from nlmcs import __version__
from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation.stats import discordant, mean_se, sign_test, signed_rank_test
from nlmcs.fields import MAX_GAMES, MAX_SEED, check_fields, option
from nlmcs.games.runner import GameHook, play_game
from nlmcs.jobs import local_executor, run_jobs
from nlmcs.runs import (
    RESULTS_NAME,
    JsonLinesStore,
    code_state,
    identity_changes,
    locked,
    now,
    read_results,
    read_run,
    repair_tail,
    write_run,
)
from nlmcs.runs import fingerprint as identity_fingerprint
from nlmcs.seeds import CHANCE_RULE, CHANCE_RULES, LEGACY_CHANCE, chance_rng, game_seed

AUDIT_FORMAT = "nlmcs-advice-audit/1"
ROW_FORMAT = "nlmcs-advice-game/1"
RUN_FORMAT = "nlmcs-advice-audit-run/1"
SPEC_NAME, ROWS_NAME = "audit.json", RESULTS_NAME
"""`audit.json`: where an older version kept the audit's identity (now in `run.json`)."""


@dataclass(frozen=True)
class AuditSpec:
    """Everything an audit plays (the number of games may grow; nothing else may change)."""

    manual: str
    """The manual whose advice rules are audited."""
    manual_sha256: str | None
    rules_file: str
    rules_sha256: str
    rules: tuple[str, ...]
    """The rules audited, by name."""
    turns: tuple[int, ...] = option(low=1)
    """Horizons: each rule's worth is read at these turns."""
    games: int = option(low=1, high=MAX_GAMES)
    """Paired seeds (game i from `game_seed(seed, i)`)."""
    seed: int = option(low=0, high=MAX_SEED)
    base: str = "builtin:normal"
    """Player 0 without the rule: a scripted policy or a search method."""
    opponent: str = "builtin:normal"
    map: str = "small"
    max_turns: int | None = option(None, low=1)
    """The game's turn limit; None = the longest horizon."""
    rollouts: int = option(30, low=1)
    depth: int = option(5, low=1)
    """Budget of a search base (ignored by scripted bases)."""
    chance: Literal[CHANCE_RULES] = CHANCE_RULE
    """The games' chance rule (`nlmcs.seeds`); folders stored before it was named used the
    legacy one, and resume with it (`stored_spec`)."""

    def __post_init__(self) -> None:
        check_fields(self, "audit option")

    @property
    def limit(self) -> int:
        return self.max_turns or max(self.turns)

    def identity(self) -> dict:
        ident = asdict(self)
        del ident["games"]
        if ident["chance"] == LEGACY_CHANCE:  # as identities were stored before it was named
            del ident["chance"]
        return json.loads(json.dumps({"format": AUDIT_FORMAT, "version": __version__, **ident}))

    def arms(self) -> list[tuple[str, str | None, str | None]]:
        """(label, rule, mode): the base itself, then each rule followed and broken."""
        out = [("base", None, None)]
        for name in self.rules:
            out += [(f"follow:{name}", name, "follow"), (f"break:{name}", name, "break")]
        return out


def check_spec(spec: AuditSpec) -> None:
    if not spec.turns:  # each horizon's range is the field's (`AuditSpec.turns`)
        raise UserInputError("--turns needs positive horizons, e.g. 20,50,100")
    if len(set(spec.turns)) != len(spec.turns):
        raise UserInputError("--turns names a horizon twice")
    if spec.max_turns is not None and max(spec.turns) > spec.max_turns:
        raise UserInputError(f"--turns {max(spec.turns)} is longer than the game's turn limit "
                             f"(--max-turns {spec.max_turns})")


class _Horizons(GameHook):
    """Reads the score margin and the result of player 0 at each horizon."""

    def __init__(self, turns: Sequence[int]):
        self.turns = sorted(turns)
        self.seen: dict[int, dict] = {}

    def on_turn_end(self, state) -> None:
        if state.turn in self.turns:
            self.seen[state.turn] = _snapshot(state)

    def on_end(self, state, result) -> None:
        for h in self.turns:  # over early: the final state stands for the later horizons
            self.seen.setdefault(h, _snapshot(state))


def _snapshot(state) -> dict:
    scores = [float(state.score(p)) for p in range(state.num_players)]
    if state.is_terminal():
        winner = state.winner()
    else:
        best = max(scores)
        winner = scores.index(best) if scores.count(best) == 1 else None
    stats = state.stats(0)
    return {"turn": int(state.turn), "score": scores[0], "opponent_score": max(scores[1:]),
            "margin": round(scores[0] - max(scores[1:]), 6), "win": winner == 0,
            "cities": int(stats.get("cities", 0)), "techs": int(stats.get("techs", 0))}


_GAMES: dict = {}


def audit_game(spec: AuditSpec):
    from nlmcs.games import make_game

    key = (spec.map, spec.limit)
    if key not in _GAMES:
        _GAMES[key] = make_game("civ", preset=spec.map, max_turns=spec.limit)
    return _GAMES[key]


def base_policy(spec: AuditSpec, game, seed: int):
    """The base player: a scripted policy by its spec, or a search method as a player."""
    from nlmcs.methods import METHODS

    name = spec.base.partition(":")[0]
    if name not in METHODS:
        return game.policy(spec.base), None
    from nlmcs.experiments.play import make_player
    from nlmcs.search.config import SearchConfig
    from nlmcs.search.planner import PlannerPolicy

    planner = make_player(spec.base, game=game, opponent=spec.opponent, seed=seed,
                          search_config=SearchConfig(rollouts=spec.rollouts, depth=spec.depth,
                                                     workers=1))  # fmt: skip
    return PlannerPolicy(planner, spec.base), planner


def play_seed(spec: AuditSpec, rules, index: int, seed: int, fingerprint: str) -> dict:
    """Every arm of game `index`: one stored line."""
    from nlmcs.advice.policy import AdvisedPolicy
    from nlmcs.methods import opponent_policy

    game = audit_game(spec)
    by_name = {r.name: r for r in rules}
    arms = []
    for label, rule, mode in spec.arms():
        base, planner = base_policy(spec, game, seed)
        player = base if rule is None else AdvisedPolicy(base, by_name[rule], mode)
        hook = _Horizons(spec.turns)
        try:
            play_game(game, {0: player, **{p: opponent_policy(game, spec.opponent)
                                           for p in range(1, game.num_players)}},
                      seed=seed, hooks=[hook], rng=chance_rng(seed, spec.chance))  # fmt: skip
        finally:
            if planner is not None:
                planner.close()
        arms.append({"arm": label, "rule": rule, "mode": mode,
                     "changes": getattr(player, "changes", 0),
                     "horizons": {str(h): hook.seen[h] for h in spec.turns}})
    return {"format": ROW_FORMAT, "index": index, "seed": seed, "fingerprint": fingerprint,
            "version": __version__, "arms": arms}


def _play_job(args) -> dict:
    return play_seed(*args)


# --- the run folder ----------------------------------------------------------------------------

def fingerprint(spec: AuditSpec) -> str:
    """The run store's identity hash, over the audit's identity."""
    return identity_fingerprint(spec.identity())


def check_row(row: object) -> str | None:
    """Why a parsed line is not an audit row (one seed, all its arms), or None."""
    if not isinstance(row, dict) or row.get("format") != ROW_FORMAT:
        return "not an audit row"
    if not isinstance(row.get("arms"), list):
        return "not an audit row (no list of arms)"
    if isinstance(row.get("index"), bool) or not isinstance(row.get("index"), int):
        return "not an audit row (no game index)"
    return None


def read_rows(folder: Path) -> list[dict]:
    """The stored lines of an audit folder; a damaged line is one error naming it (a last line
    cut by a crash is not a row: its seed is played again)."""
    return read_results(Path(folder) / ROWS_NAME, check=check_row, key=lambda r: r["index"],
                        label=lambda i: f"seed {i}").rows


def _read_identity(folder: Path) -> dict | None:
    """The stored run record: run.json, or an older version's audit.json."""
    run = read_run(folder, fmt=RUN_FORMAT, what="an advice audit's run file",
                   required=("identity",))
    if run is None and (folder / SPEC_NAME).exists():
        from nlmcs.files import read_document

        run = read_document(folder / SPEC_NAME, what="audit record", max_bytes=1 << 20)
    return run


def stored_spec(folder: Path, spec: AuditSpec) -> AuditSpec:
    """`spec` as the audit stored in `folder` plays it: a folder stored before the chance rule
    was named (its identity names none, and is otherwise `spec`'s) goes on with the legacy
    rule, so its games resume and pair with the ones it holds."""
    stored = _read_identity(Path(folder)) if Path(folder).is_dir() else None
    old = (stored or {}).get("identity")
    legacy = replace(spec, chance=LEGACY_CHANCE)
    if isinstance(old, dict) and "chance" not in old and old == legacy.identity():
        return legacy
    return spec


def start_folder(folder: Path, spec: AuditSpec) -> list[dict]:
    """Check (or create) the folder for `spec`; returns the rows already stored. Call it
    holding the folder's lock."""
    folder = Path(folder)
    stored = _read_identity(folder) if folder.is_dir() else None
    if stored is not None:
        old = stored.get("identity")
        if old != spec.identity():
            changed = identity_changes(old if isinstance(old, dict) else {}, spec.identity())
            raise UserInputError(f"{folder}: holds another audit ({'; '.join(changed)}); give "
                                 "another --out")
    repair_tail(folder / ROWS_NAME)  # a half line a crash or a full disk left
    rows = read_rows(folder)
    run = {"format": RUN_FORMAT, "created": now(), **(stored or {})}
    # the seeds asked for so far: a smaller --games adds nothing and takes nothing away
    run.update(format=RUN_FORMAT, identity=spec.identity(),
               games=max(spec.games, int((stored or {}).get("games") or 0)),
               fingerprint=fingerprint(spec), updated=now(), code=code_state())
    write_run(folder, run)
    fp = fingerprint(spec)
    return [r for r in rows if r.get("fingerprint") == fp]


def run_audit(spec: AuditSpec, rules, folder: Path, *, workers: int = 1,
              progress: Callable[[int, int], None] | None = None,
              executor: Executor | None = None, max_in_flight: int | None = None
              ) -> list[dict]:
    """Play the seeds not yet stored (`nlmcs.jobs.run_jobs`, one fsynced line each) on
    `executor` (a Dask cluster's), else in `workers` local processes; returns every stored row
    of this audit."""

    check_spec(spec)
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserInputError(f"{folder}: cannot create the audit folder ({err.strerror})"
                             ) from None
    with locked(folder):
        spec = stored_spec(folder, spec)
        rows = start_folder(folder, spec)
        done = {r["index"] for r in rows}
        fp = fingerprint(spec)
        todo = [(spec, rules, i, game_seed(spec.seed, i), fp) for i in range(spec.games)
                if i not in done]
        total = spec.games
        if progress:
            progress(len(done & set(range(total))), total)

        def keep(row: dict) -> None:
            rows.append(row)
            if progress:
                progress(1, 0)

        store = JsonLinesStore(folder / ROWS_NAME, stored=len(rows), check=check_row,
                               on_row=keep, describe=lambda job: f"game {job[2]}",
                               noun="seeds")
        workers = min(workers, len(todo))
        local = local_executor(workers) if executor is None else nullcontext(executor)
        with local as games:
            run_jobs(todo, _play_job, store, games, max_in_flight=max_in_flight or workers)
    # every stored seed: a smaller --games never shrinks the tables (the shipped 300-seed
    # summary was once rewritten from 2 seeds by `--games 2`)
    return sorted(rows, key=lambda r: r["index"])


# --- the tables --------------------------------------------------------------------------------

def summarise(rows: Iterable[dict], spec: AuditSpec) -> list[dict]:
    """Per rule and horizon: follow vs break on the seeds both played (paired), and each
    against the base."""
    by_arm: dict[str, dict[int, dict]] = {}
    for row in rows:
        for arm in row["arms"]:
            by_arm.setdefault(arm["arm"], {})[row["index"]] = arm
    out = []
    for rule in spec.rules:
        follow, broken = by_arm.get(f"follow:{rule}", {}), by_arm.get(f"break:{rule}", {})
        base = by_arm.get("base", {})
        seeds = sorted(set(follow) & set(broken) & set(base))
        for h in spec.turns:
            key = str(h)

            def col(arms: dict, field: str, key=key, seeds=seeds) -> np.ndarray:
                return np.array([arms[i]["horizons"][key][field] for i in seeds], dtype=float)

            fm, bm, base_m = col(follow, "margin"), col(broken, "margin"), col(base, "margin")
            fw, bw = col(follow, "win"), col(broken, "win")
            worth, worth_se = mean_se(fm - bm)
            f_only, b_only = discordant(fw.astype(bool), bw.astype(bool))
            fb, fb_se = mean_se(fm - base_m)
            bb, bb_se = mean_se(bm - base_m)
            out.append({
                "rule": rule, "turns": h, "pairs": len(seeds),
                "worth": _r(worth), "worth_se": _r(worth_se),
                "sd": _r(float(np.std(fm - bm, ddof=1)) if len(seeds) > 1 else math.nan),
                "signed_rank_p": float(signed_rank_test(fm - bm)),
                "follow_win": _r(fw.mean() if len(seeds) else math.nan),
                "break_win": _r(bw.mean() if len(seeds) else math.nan),
                "win_diff": _r((fw.mean() - bw.mean()) if len(seeds) else math.nan),
                "follow_only": f_only, "break_only": b_only,
                "sign_p": float(sign_test(f_only, b_only)),
                "follow_vs_base": _r(fb), "follow_vs_base_se": _r(fb_se),
                "break_vs_base": _r(bb), "break_vs_base_se": _r(bb_se),
                "base_margin": _r(base_m.mean() if len(seeds) else math.nan),
                "follow_changes": _r(np.mean([follow[i]["changes"] for i in seeds])
                                     if seeds else math.nan, 1),
                "break_changes": _r(np.mean([broken[i]["changes"] for i in seeds])
                                    if seeds else math.nan, 1),
            })  # fmt: skip
    return out


def _r(x: float, digits: int = 3) -> float:
    return round(float(x), digits) if x is not None and math.isfinite(float(x)) else math.nan


def _fmt(x: float, digits: int = 2, sign: bool = True) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def markdown(summary: Sequence[dict], spec: AuditSpec, command: str = "") -> str:
    lines = [f"# Advice audit: {spec.manual} ({Path(spec.rules_file).name})", "",
             f"Base {spec.base} (player 0) vs {spec.opponent}, {spec.map} map, seeds "
             f"game_seed({spec.seed}, i), chance rule {spec.chance}. Worth = paired score "
             "margin following the rule minus breaking it (se), Wilcoxon signed-rank p; wins: "
             "follow % vs break %, exact sign test on discordant pairs. Follow/break vs base: "
             "paired margin against the unmodified base. Changes: actions the rule replaced "
             "per game.", ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    lines += ["| rule | turns | pairs | worth (se) | p | win % follow / break | sign p | "
              "follow - base | break - base | changes follow / break |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in summary:
        lines.append(
            f"| {r['rule']} | {r['turns']} | {r['pairs']} | {_fmt(r['worth'])} "
            f"({_fmt(r['worth_se'], sign=False)}) | {r['signed_rank_p']:.2g} | "
            f"{100 * r['follow_win']:.1f} / {100 * r['break_win']:.1f} | {r['sign_p']:.2g} | "
            f"{_fmt(r['follow_vs_base'])} ({_fmt(r['follow_vs_base_se'], sign=False)}) | "
            f"{_fmt(r['break_vs_base'])} ({_fmt(r['break_vs_base_se'], sign=False)}) | "
            f"{_fmt(r['follow_changes'], 1, False)} / {_fmt(r['break_changes'], 1, False)} |")
    return "\n".join(lines) + "\n"


def worth_figure(summary: Sequence[dict], spec: AuditSpec) -> bytes:
    """Rules x horizons: the worth of following each rule, with its standard error."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nlmcs.experiments.ablation.plots import png

    rules, turns = list(spec.rules), list(spec.turns)
    grid = np.full((len(rules), len(turns)), np.nan)
    text = [["" for _ in turns] for _ in rules]
    for r in summary:
        i, j = rules.index(r["rule"]), turns.index(r["turns"])
        grid[i, j] = r["worth"]
        text[i][j] = f"{_fmt(r['worth'])}\n({_fmt(r['worth_se'], sign=False)})"
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(turns), 1.0 + 0.55 * len(rules)))
    # Symmetric log-like scale: worths span two orders of magnitude across horizons.
    limit = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
    norm = matplotlib.colors.SymLogNorm(linthresh=0.5, vmin=-limit, vmax=limit)
    im = ax.imshow(grid, cmap="RdBu", norm=norm, aspect="auto")
    for i in range(len(rules)):
        for j in range(len(turns)):
            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(turns)), [f"{t} turns" for t in turns])
    ax.set_yticks(range(len(rules)), rules)
    ax.set_title(f"What is following each rule of {spec.manual} worth?\n(score margin, follow - "
                 f"break, (se); {spec.base} vs {spec.opponent}, {spec.map} map, "
                 f"{max((r['pairs'] for r in summary), default=0)} paired seeds)", fontsize=9)
    bar = fig.colorbar(im, ax=ax, label="points", ticks=_spaced_ticks(norm, limit))
    bar.ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    bar.ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    fig.tight_layout()
    return png(fig)


def _spaced_ticks(norm, limit: float, gap: float = 0.1) -> list[float]:
    """Round values (0, 0.5, 1, 2, 5, 10, ...) for a symmetric-log colour bar, no two closer
    than `gap` of its height: the default locator crowds labels into each other near zero."""
    steps = [m * 10.0 ** e for e in range(-1, 5) for m in (1, 2, 5)]  # 0.1, 0.2, 0.5, 1 ...
    values = sorted({0.0, *(v for x in steps if x <= limit for v in (x, -x))}, key=abs)
    kept: list[float] = []
    for v in values:
        if all(abs(float(norm(v)) - float(norm(k))) >= gap for k in kept):
            kept.append(v)
    return sorted(kept)


def write_outputs(folder: Path, rows: Sequence[dict], spec: AuditSpec,
                  command: str = "") -> tuple[list[dict], list[Path]]:
    """games.csv (one row per seed, arm and horizon), summary.csv, summary.md and worth.png."""
    from nlmcs.files import write_atomic, write_csv_rows

    folder = Path(folder)
    flat = [{"index": row["index"], "seed": row["seed"], "arm": arm["arm"],
             "rule": arm["rule"] or "", "mode": arm["mode"] or "base", "horizon": int(h),
             "changes": arm["changes"], **snap}
            for row in sorted(rows, key=lambda r: r["index"]) for arm in row["arms"]
            for h, snap in arm["horizons"].items()]  # fmt: skip
    summary = summarise(rows, spec)
    paths = [write_csv_rows(folder / "games.csv", flat),
             write_csv_rows(folder / "summary.csv", summary),
             write_atomic(folder / "summary.md", markdown(summary, spec, command)),
             write_atomic(folder / "worth.png", worth_figure(summary, spec))]
    return summary, paths
