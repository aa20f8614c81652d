"""Tables, paired tests and plots of an ablation, rebuilt from its stored games at any time.

Writes into the run folder: `games.csv` (every game), `summary.csv` and `summary.md` (per arm:
wins, losses, undecided, win % with standard error, mean seconds per step, mean score margin,
games: the papers' table), `pairs.csv` (every arm against every other on their shared seeds;
see `stats`), `winrate.png`, and with several roll-out budgets `strength_vs_time.png`
(win % against seconds per step, the papers' figure). Draws count as undecided in the table.
A run of a rule variant (`--variant`) adds `foundings.csv` and a table of foundings on the
sacred terrain to `summary.md` (`foundings_report`). A run with a reading arm, its no-text arm
and a control (`text`, `nonlinear`, `random-text` or `unrelated-text`; `text-meaning` with its
own; `uct-meaning`, `uct`, `uct-random-meaning`; `nlmcs.methods.text_controls`) adds
`shares.csv` and a table of each control's *semantic share* of the reading arm's gain,
(text - control) / (text - no text) (`semantic_shares`).
Games played with `--log-decisions` carry their relevance (`relevance.measures.game_relevance`),
and the report adds `relevance.csv` and a table per text arm: median entropy, top-sentence lift,
share of uniform decisions.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.experiments.ablation import stats as st
from nlmcs.experiments.ablation.store import (
    RESULTS_NAME,
    BadLine,
    locked,
    read_results,
    read_run,
)
from nlmcs.files import write_atomic
from nlmcs.methods import text_controls

GAME_COLUMNS = ("arm", "method", "rollouts", "game", "seed", "outcome", "winner", "finished",
                "steps", "score", "opponent_score", "margin", "seconds_per_step", "wall_seconds",
                "host", "finished_at", "version", "fingerprint")  # fmt: skip
FOUNDING_COLUMNS = ("terrain", "cities", "sacred", "sacred_reachable", "sacred_steps",
                    "chance_share")
"""A variant game's `foundings` fields, as games.csv columns."""
BOOTSTRAP_REPS = 10_000


@dataclass
class ArmSummary:
    arm: str
    method: str
    rollouts: int
    wins: int
    losses: int
    undecided: int
    win_pct: float
    win_se_pct: float
    win_low_pct: float
    """Wilson 95% interval of the win rate (never of zero width, unlike p +- se at 0 or n
    wins), as the plots draw it."""
    win_high_pct: float
    seconds_per_step: float
    margin: float
    margin_se: float
    games: int


@dataclass
class PairTest:
    """Arm `a` against arm `b` on the `pairs` seeds both played."""

    a: str
    b: str
    pairs: int
    a_only_wins: int
    b_only_wins: int
    sign_p: float
    win_diff_pct: float
    win_diff_low_pct: float
    win_diff_high_pct: float
    margin_diff: float
    margin_diff_se: float
    margin_p: float


@dataclass
class ShareTest:
    """How much of text's gain over no text survives a control: (text - control) / (text -
    none), on the `pairs` seeds all three played, for wins and for score margins; nan
    ("undefined") where text does not beat no text. `*_defined`: the fraction of bootstrap
    resamples where it does (`stats.share_bootstrap`)."""

    text: str
    control: str
    none: str
    pairs: int
    text_minus_none_win_pct: float
    text_minus_control_win_pct: float
    share_win: float
    share_win_low: float
    share_win_high: float
    share_win_defined: float
    text_minus_none_margin: float
    text_minus_control_margin: float
    share_margin: float
    share_margin_low: float
    share_margin_high: float
    share_margin_defined: float


@dataclass
class ArmRelevance:
    """A text arm's relevance over its games with a kept log: the mean over games of each
    game's median normalised entropy and median top-sentence lift over uniform, and of its
    share of uniform decisions."""

    arm: str
    games: int
    decisions: int
    entropy: float
    top_lift: float
    uniform_share: float


def _relevance_of(row: dict) -> dict | None:
    """A row's relevance summary if it is whole (a hand-edited or partial one is left out)."""
    rel = row.get("relevance")
    if not isinstance(rel, dict) or not isinstance(rel.get("decisions"), int) \
            or rel["decisions"] <= 0:
        return None
    values = [rel.get(k) for k in ("entropy", "top_lift", "uniform_share")]
    ok = all(isinstance(v, int | float) and math.isfinite(v) for v in values)
    return rel if ok else None


def arm_relevance(rows: list[dict], order: list[str]) -> list[ArmRelevance]:
    out = []
    for arm in order:
        found = [rel for r in rows if r["arm"] == arm
                 for rel in [_relevance_of(r)] if rel is not None]
        if found:
            out.append(ArmRelevance(arm, len(found), sum(f["decisions"] for f in found),
                                    *(sum(f[k] for f in found) / len(found)
                                      for k in ("entropy", "top_lift", "uniform_share"))))
    return out


def relevance_markdown(arms: list[ArmRelevance]) -> str:
    if not arms:
        return ""
    from nlmcs.model.evaluator import UNIFORM_ENTROPY, UNIFORM_TOP

    lines = ["", "Relevance, from the kept decision logs: per game the median normalised "
             "entropy (1 = uniform) and median top-sentence probability over uniform, and the "
             f"share of uniform decisions (entropy >= {UNIFORM_ENTROPY} and top <= "
             f"{UNIFORM_TOP}x uniform); means over games.", "",
             "| arm | games | decisions | entropy | top lift | uniform share |",
             "|---|---:|---:|---:|---:|---:|"]
    for a in arms:
        lines.append(f"| {a.arm} | {a.games} | {a.decisions} | {a.entropy:.3f} | "
                     f"{a.top_lift:.2f}x | {a.uniform_share:.3f} |")
    return "\n".join(lines) + "\n"


@dataclass
class Report:
    folder: Path
    arms: list[ArmSummary]
    pairs: list[PairTest]
    shares: list[ShareTest] = field(default_factory=list)
    relevance: list[ArmRelevance] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)


def arm_order(rows: list[dict], run: dict | None) -> list[str]:
    """The spec's arms in table order, then any other arm found in the rows (a mixed run)."""
    order = list((run or {}).get("spec", {}).get("arms", []))
    return order + sorted({r["arm"] for r in rows} - set(order))


def summarise(rows: list[dict], order: list[str]) -> list[ArmSummary]:
    out = []
    for arm in order:
        mine = [r for r in rows if r["arm"] == arm]
        if not mine:
            continue
        wins = sum(r["outcome"] == "win" for r in mine)
        losses = sum(r["outcome"] == "loss" for r in mine)
        p, se = st.win_rate(wins, len(mine))
        low, high = st.wilson_interval(wins, len(mine))
        secs = [r["seconds_per_step"] for r in mine if r.get("seconds_per_step") is not None]
        margin, margin_se = st.mean_se([r["margin"] for r in mine])
        out.append(ArmSummary(arm, mine[0]["method"], mine[0]["rollouts"], wins, losses,
                              len(mine) - wins - losses, 100 * p, 100 * se, 100 * low,
                              100 * high,
                              sum(secs) / len(secs) if secs else math.nan, margin, margin_se,
                              len(mine)))  # fmt: skip
    return out


def paired_tests(rows: list[dict], order: list[str], *, reps: int = BOOTSTRAP_REPS,
                 seed: int = 0) -> list[PairTest]:
    """Every arm against every later one in `order`, on the games (seeds) both played."""
    by_arm = {arm: {r["seed"]: r for r in rows if r["arm"] == arm} for arm in order}
    out = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            shared = sorted(set(by_arm[a]) & set(by_arm[b]))
            if not shared:
                continue
            ra, rb = [by_arm[a][s] for s in shared], [by_arm[b][s] for s in shared]
            wa = [r["outcome"] == "win" for r in ra]
            wb = [r["outcome"] == "win" for r in rb]
            a_only, b_only = st.discordant(wa, wb)
            diff, low, high = st.paired_bootstrap(wa, wb, reps=reps, seed=seed)
            d = [x["margin"] - y["margin"] for x, y in zip(ra, rb, strict=True)]
            mdiff, mse = st.mean_se(d)
            out.append(PairTest(a, b, len(shared), a_only, b_only, st.sign_test(a_only, b_only),
                                100 * diff, 100 * low, 100 * high, mdiff, mse,
                                st.signed_rank_test(d)))  # fmt: skip
    return out


def share_test(text: str, control: str, none: str, rows: list[dict], *,
               reps: int = BOOTSTRAP_REPS, seed: int = 0) -> ShareTest | None:
    """The semantic share of arms `text`, `control`, `none` of `rows`, on the seeds all three
    played; None where they share none."""
    by_arm = {arm: {r["seed"]: r for r in rows if r["arm"] == arm} for arm in (text, control,
                                                                               none)}
    shared = sorted(set(by_arm[text]) & set(by_arm[control]) & set(by_arm[none]))
    if not shared:
        return None
    wins = [[float(by_arm[a][k]["outcome"] == "win") for k in shared] for a in (text, control,
                                                                                none)]
    margins = [[float(by_arm[a][k]["margin"]) for k in shared] for a in (text, control, none)]
    out = [text, control, none, len(shared)]
    for values, scale in ((wins, 100.0), (margins, 1.0)):
        t, c, n = (sum(v) / len(v) for v in values)
        out += [scale * (t - n), scale * (t - c),
                *st.share_bootstrap(*values, reps=reps, seed=seed)]
    return ShareTest(*out)


def semantic_shares(rows: list[dict], order: list[str], *, reps: int = BOOTSTRAP_REPS,
                    seed: int = 0) -> list[ShareTest]:
    """Each reading arm's share against each of its controls of the same budget that the run
    played, over its no-text arm (`nlmcs.methods.text_controls`: text against random-text and
    unrelated-text over nonlinear, text-meaning against its own, uct-meaning over uct, ...)."""
    method = {r["arm"]: (r["method"], r["rollouts"]) for r in rows}
    out = []
    for budget in sorted({b for _, b in method.values()}):
        arms = {m: a for a in order if a in method for m, b in [method[a]] if b == budget}
        for reader, arm in arms.items():
            found = text_controls(reader)
            if found is None or found[1] not in arms:
                continue
            for control in found[0]:
                if control in arms:
                    test = share_test(arm, arms[control], arms[found[1]], rows, reps=reps,
                                      seed=seed)
                    if test is not None:
                        out.append(test)
    return out


def _share(value: float, low: float, high: float, defined: float) -> str:
    if math.isnan(value):
        return "undefined (text does not beat no text)"
    ends = ["unbounded" if math.isinf(x) else f"{x:.2f}" for x in (low, high)]
    note = f"; text beats no text in {defined:.0%} of resamples" if defined < 1 else ""
    return f"{value:.2f} [{ends[0]}, {ends[1]}{note}]"


def shares_markdown(shares: list[ShareTest], *, reps: int = BOOTSTRAP_REPS,
                    seed: int = 0) -> str:
    """The semantic shares as a Markdown table, with what they mean."""
    if not shares:
        return ""
    lines = ["", "Semantic share of text's gain: (text - control) / (text - no text), on the "
             f"seeds all three played, with a {reps:,}-resample paired bootstrap 95% interval "
             f"(seed {seed}); 1 = the control keeps none of the gain (it was meaning), 0 = the "
             "control keeps all of it (it was word statistics); undefined where text does not "
             "beat no text, and an end unbounded where resamples in which it does not reach "
             "it.", "",
             "| text - control, over text - none | pairs | win % gains | share of win % | "
             "margin gains | share of margin |", "|---|---:|---:|---|---:|---|"]
    for t in shares:
        win = _share(t.share_win, t.share_win_low, t.share_win_high, t.share_win_defined)
        margin = _share(t.share_margin, t.share_margin_low, t.share_margin_high,
                        t.share_margin_defined)
        lines.append(
            f"| {t.text} - {t.control}, over {t.text} - {t.none} | {t.pairs} | "
            f"{t.text_minus_control_win_pct:+.1f} / {t.text_minus_none_win_pct:+.1f} | {win} | "
            f"{t.text_minus_control_margin:+.2f} / {t.text_minus_none_margin:+.2f} | {margin} |")
    return "\n".join(lines) + "\n"


def _num(x: float, digits: int) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def summary_markdown(arms: list[ArmSummary], pairs: list[PairTest], *, title: str = "",
                     reps: int = BOOTSTRAP_REPS, seed: int = 0) -> str:
    """The papers' table, then the paired tests, as Markdown."""
    lines = [f"# {title}", ""] if title else []
    lines += ["| method | wins | losses | undecided | win % [95% CI] | s/step | margin (se) | "
              "games |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for s in arms:
        lines.append(f"| {s.arm} | {s.wins} | {s.losses} | {s.undecided} | "
                     f"{s.win_pct:.1f} [{s.win_low_pct:.1f}, {s.win_high_pct:.1f}] | "
                     f"{_num(s.seconds_per_step, 3)} | "
                     f"{_num(s.margin, 2)} ({_num(s.margin_se, 2)}) | {s.games} |")
    if pairs:
        lines += ["", f"Paired on shared seeds. Wins: exact sign test on discordant pairs "
                  f"(A only / B only) and a {reps:,}-resample paired bootstrap 95% interval "
                  f"(seed {seed}) of the win-% difference. Score margin (mine minus the "
                  "opponent's): mean paired difference A - B (se) and Wilcoxon signed-rank p.",
                  "", "| A vs B | pairs | A only / B only | sign p | win % diff [95% CI] | "
                  "margin diff (se) | signed-rank p |", "|---|---:|---:|---:|---:|---:|---:|"]
        for t in pairs:
            lines.append(f"| {t.a} vs {t.b} | {t.pairs} | {t.a_only_wins} / {t.b_only_wins} | "
                         f"{t.sign_p:.3g} | {t.win_diff_pct:+.1f} [{t.win_diff_low_pct:+.1f}, "
                         f"{t.win_diff_high_pct:+.1f}] | {_num(t.margin_diff, 2)} "
                         f"({_num(t.margin_diff_se, 2)}) | {t.margin_p:.3g} |")
    return "\n".join(lines) + "\n"


def verdict_markdown(pairs: list[PairTest], first: str) -> str:
    """What the run can and cannot say about its first arm against each other arm, in words,
    at its size: a table of a few pairs reads as a lead that chance gives as often as not."""
    lines = []
    for t in pairs:
        if t.a != first:
            continue
        wins_seen, margin_seen = st.wins_differ(t), st.margins_differ(t)
        interval = (f"win % difference {t.win_diff_pct:+.1f} points, 95% interval "
                    f"{t.win_diff_low_pct:+.1f} to {t.win_diff_high_pct:+.1f}, sign p "
                    f"{t.sign_p:.2g}; score margin {t.margin_diff:+.2f} per game, signed-rank "
                    f"p {t.margin_p:.2g}")
        if wins_seen or margin_seen:
            side = "ahead of" if (t.win_diff_pct if wins_seen else t.margin_diff) > 0 \
                else "behind"
            lines.append(f"- **{t.a} is {side} {t.b}** on these {t.pairs} pairs ({interval}). "
                         "One test of several on one block of seeds: confirm it on fresh seeds "
                         "before believing it.")
        elif st.win_tests_disagree(t):
            lines.append(f"- **{t.a} vs {t.b}: the two win tests disagree** at {t.pairs} pairs "
                         f"({interval}): {_disagreement(t)}. A difference is said only where "
                         "both agree, so this is not one; it is a lead worth a pre-registered "
                         "run on fresh seeds, not a finding.")
        else:
            half = (t.win_diff_high_pct - t.win_diff_low_pct) / 2
            lines.append(f"- **{t.a} vs {t.b}: no difference this run can see** at {t.pairs} "
                         f"pairs ({interval}). A lead in the table above is within chance; a "
                         f"win-rate difference smaller than about {half:.0f} points cannot be "
                         "told at this size.")
    if not lines:
        return ""
    return "\n## What this run can say\n\n" + "\n".join(lines) + "\n"


def _disagreement(t: PairTest) -> str:
    """Which of the two win tests sees a difference, in words."""
    side = "above" if t.win_diff_low_pct > 0 else "below"
    if st.win_tests(t)[0]:
        return f"the sign test is below {st.SIGNIFICANT} but the bootstrap interval spans zero"
    return (f"the bootstrap interval lies {side} zero but the exact sign test is not below "
            f"{st.SIGNIFICANT}")


def _flat(row: dict) -> dict:
    """A row with its variant `foundings` fields as columns of their own."""
    return {**row, **(row.get("foundings") or {})}


def _csv(records: list[dict], columns) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


def _twin_words(spec: dict) -> str:
    """Which twin random-text read (a run stored before twins per game read NAME-random)."""
    if "twin_seed" not in spec:
        return f"one twin ({spec.get('manual')}-random)"
    if spec["twin_seed"] is None:
        return "a twin per game (shuffled with the game's seed)"
    return f"one twin (seed {spec['twin_seed']})"


PAIRED_GAME_KEYS = ("game", "game_options", "steps", "full_games", "opponent", "seed")
"""What two runs must share for their games of one seed to be the same game."""


def _arms_of_runs(arms: list[tuple[Path, str]]) -> tuple[list[dict], list[str], int]:
    """(rows relabelled RUN/ARM, the labels, the first run's seed S) of arms of several runs;
    runs whose games differ (game, its options, length, opponent, seed S) are refused."""
    specs, rows, order = [], [], []
    folders_named: dict[str, set] = {}
    for folder, _ in arms:
        folders_named.setdefault(Path(folder).name, set()).add(Path(folder).resolve())
    for folder, arm in arms:
        name = Path(folder).name
        run = read_run(Path(folder))
        if run is None:
            raise UserInputError(f"{folder}: no ablation run here (no run.json)")
        mine = [r for r in read_results(Path(folder) / RESULTS_NAME).rows if r["arm"] == arm]
        if not mine:
            raise UserInputError(f"{folder}: no games of arm {arm!r}")
        # runs of one folder name are told apart by their whole path
        label = f"{name if len(folders_named[name]) == 1 else folder}/{arm}"
        if label in order:
            raise UserInputError(f"{folder}: arm {arm!r} named twice")
        rows += [{**r, "arm": label} for r in mine]
        specs.append(run["spec"])
        order.append(label)
    for (folder, _), spec in zip(arms[1:], specs[1:], strict=True):
        differ = [k for k in PAIRED_GAME_KEYS if specs[0].get(k) != spec.get(k)]
        if differ:
            raise UserInputError(f"{arms[0][0]} and {folder} play different games "
                                 f"({', '.join(differ)} differ): their seeds do not pair")
    return rows, order, int(specs[0].get("seed", 0))


def pair_runs(a: tuple[Path, str], b: tuple[Path, str]) -> str:
    """One arm of one run against one arm of another (e.g. another roll-out budget at equal
    wall time, or another manual on the same seeds), paired on the seeds both played, as the
    Markdown tables of a report. Runs whose games differ are refused."""
    rows, order, seed = _arms_of_runs([a, b])
    return summary_markdown(summarise(rows, order), paired_tests(rows, order, seed=seed),
                            seed=seed)


def share_runs(text: tuple[Path, str], control: tuple[Path, str],
               none: tuple[Path, str]) -> str:
    """The semantic share of a control read in another run (a translation, the release's
    random text) or in the same one: the three arms' table, their paired tests and the
    share, as Markdown."""
    rows, order, seed = _arms_of_runs([text, control, none])
    test = share_test(*order, rows, seed=seed)
    if test is None:
        raise UserInputError("the three arms share no seed: nothing to pair")
    return (summary_markdown(summarise(rows, order), paired_tests(rows, order, seed=seed),
                             seed=seed) + shares_markdown([test], seed=seed)
            + relevance_markdown(arm_relevance(rows, order)))


def figure_title(spec: dict) -> str:
    """What a figure's games were: opponent, game and map, length, budget, seed."""
    options = spec.get("game_options") or {}
    where = spec.get("game", "civ") + (f", {options['preset']} map" if options.get("preset")
                                       else "")
    length = (f"full {options.get('max_turns') or spec.get('steps')}-turn games"
              if spec.get("full_games") else f"{spec.get('steps')} steps")
    budget = f"{'/'.join(map(str, spec.get('rollouts', [])))} roll-outs x depth " \
             f"{(spec.get('search') or {}).get('depth')}"
    return f"vs {spec.get('opponent')}; {where}; {length}; {budget}; seed {spec.get('seed')}"


def write_report(folder: Path, *, strict: bool = True) -> Report:
    """Rebuild every report file from the stored games. `strict`: a bad results line is a
    `UserInputError` (naming it); otherwise the good rows are reported and the bad lines
    returned. Holds the folder's lock: a run still writing there refuses it in one line (its
    own report follows when it ends; `nlmcs ablation status` reads without writing)."""
    folder = Path(folder)
    run = read_run(folder)
    if run is None:
        raise UserInputError(f"{folder}: no ablation run here (no run.json)")
    with locked(folder):
        return _write_report(folder, run, strict=strict)


def _write_report(folder: Path, run: dict, *, strict: bool) -> Report:
    results = read_results(folder / RESULTS_NAME, strict=strict)
    rows = sorted(results.rows, key=lambda r: (r["game"], r["arm"]))
    order = arm_order(rows, run)
    seed = int(run["spec"].get("seed", 0))
    report = Report(folder, summarise(rows, order), paired_tests(rows, order, seed=seed),
                    semantic_shares(rows, order, seed=seed), arm_relevance(rows, order),
                    bad=results.bad)  # fmt: skip
    spec = run["spec"]
    title = (f"Ablation {folder.name}: {spec.get('steps')} steps, depth "
             f"{spec['search'].get('depth')}, vs {spec.get('opponent')}, seed {seed}")
    if "random-text" in spec.get("methods", []):
        title += f"; random-text reads {_twin_words(spec)}"
    if spec.get("game") == "freeciv":
        title += ("\n\nOn a local FreeCiv 3.0 server against FreeCiv's AI, played as a player "
                  "(fog of war); no observer connection, no savegame reading. The winner has "
                  "the higher of FreeCiv's final scores.")
    variant = (spec.get("game_options") or {}).get("variant")
    if variant:
        title += f"; rule variant {variant}"
    outputs = {
        "games.csv": _csv([_flat(r) for r in rows],
                          GAME_COLUMNS + (FOUNDING_COLUMNS if variant else ())),
        "summary.csv": _csv([asdict(s) for s in report.arms], [f.name for f in
                            fields(ArmSummary)]),
        "pairs.csv": _csv([asdict(t) for t in report.pairs], [f.name for f in
                          fields(PairTest)]),
        "summary.md": summary_markdown(report.arms, report.pairs, title=title, seed=seed)
        + verdict_markdown(report.pairs, order[0] if order else "")
        + shares_markdown(report.shares, seed=seed) + relevance_markdown(report.relevance),
    }  # fmt: skip
    if report.relevance:
        outputs["relevance.csv"] = _csv([asdict(a) for a in report.relevance],
                                        [f.name for f in fields(ArmRelevance)])
    if report.shares:
        outputs["shares.csv"] = _csv([asdict(t) for t in report.shares],
                                     [f.name for f in fields(ShareTest)])
    if variant:
        from nlmcs.experiments.ablation.foundings_report import (
            FoundingSummary,
            founding_markdown,
            founding_summaries,
        )

        found = founding_summaries(rows, order)
        outputs["summary.md"] += founding_markdown(found, variant)
        outputs["foundings.csv"] = _csv([asdict(s) for s in found],
                                        [f.name for f in fields(FoundingSummary)])
    for name, text in outputs.items():
        write_atomic(folder / name, text)
        report.files.append(folder / name)
    if report.arms:
        from nlmcs.experiments.ablation.plots import png, strength_vs_time, winrate_figure

        plot_title = figure_title(spec)
        write_atomic(folder / "winrate.png", png(winrate_figure(report.arms, report.pairs,
                                                                  title=plot_title)))
        report.files.append(folder / "winrate.png")
        if len({s.rollouts for s in report.arms}) > 1:
            write_atomic(folder / "strength_vs_time.png",
                         png(strength_vs_time(report.arms, title=plot_title)))
            report.files.append(folder / "strength_vs_time.png")
    return report


@dataclass
class ArmProgress:
    arm: str
    done: int
    total: int
    wins: int


@dataclass
class RunStatus:
    """What a run folder holds against what its spec asks for."""

    folder: Path
    spec: dict
    arms: list[ArmProgress]
    configurations: int
    bad: list[BadLine]

    @property
    def done(self) -> int:
        return sum(min(a.done, a.total) for a in self.arms)

    @property
    def total(self) -> int:
        return sum(a.total for a in self.arms)


def run_status(folder: Path) -> RunStatus:
    """Games done and left per arm (bad results lines are listed, not fatal)."""
    folder = Path(folder)
    run = read_run(folder)
    if run is None:
        raise UserInputError(f"{folder}: no ablation run here (no run.json)")
    results = read_results(folder / RESULTS_NAME, strict=False)
    spec = run["spec"]
    games = int(spec["games"])  # counted, never listed: a run.json may ask for any number
    arms = []
    for arm in arm_order(results.rows, run):
        mine = [r for r in results.rows if r["arm"] == arm]
        total = games if arm in spec["arms"] else 0
        arms.append(ArmProgress(arm, sum(0 <= r["game"] < games for r in mine) if total else
                                len(mine), total, sum(r["outcome"] == "win" for r in mine)))
    return RunStatus(folder, spec, arms, len(run.get("identities", {})), results.bad)
