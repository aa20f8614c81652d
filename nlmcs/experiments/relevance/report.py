"""The relevance report: one self-contained HTML page of what the model read over a game.

Sections: the games (method, manual, budget, result), relevance entropy over the game (a plot),
the sentences ranked first most often and by which unit types, the strongest learned
word-to-game-attribute associations, and a timeline with the map of every step and, per agent,
the top sentences with their probabilities and the sampled sentence with its action and state
words marked. Given two logs (say text and random-text) every section shows them side by side.

Everything is inline (CSS, plots and maps as data: URIs) and a Content-Security-Policy forbids
loading anything else, so the page opens offline and can be mailed as one file.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from nlmcs.experiments.relevance import summary
from nlmcs.experiments.relevance.log import DecisionLog, require_text
from nlmcs.experiments.relevance.maps import map_pictures
from nlmcs.experiments.relevance.plots import data_uri, entropy_plot
from nlmcs.experiments.relevance.views import action_words, mark_words, q_rank
from nlmcs.files import write_atomic

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1400px; padding: 0 18px;
       color: #222; background: #fafafa; }
h1 { margin: 18px 0 4px; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 3px; margin-top: 30px; }
nav a { margin-right: 6px; } .muted { color: #777; }
table { border-collapse: collapse; background: #fff; }
td, th { border: 1px solid #e2e2e2; padding: 3px 6px; vertical-align: top; text-align: left; }
th { background: #f0f0f0; }
.cols { display: grid; gap: 14px; }
.col { min-width: 0; }
.w-action { background: #ffe066; border-radius: 3px; padding: 0 2px; font-weight: 600; }
.w-state { background: #99e9f2; border-radius: 3px; padding: 0 2px; font-weight: 600; }
.step { border-top: 1px solid #ccc; margin-top: 14px; }
.stepbody { display: flex; flex-wrap: wrap; gap: 10px; align-items: flex-start; }
.cards { flex: 1 1 480px; min-width: 0; }
.map { flex: 0 0 auto; max-width: 100%; border: 1px solid #ccc; background: #fff; }
.agent { background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: 6px 8px;
         margin: 6px 0; }
.who { font-weight: 600; } .act { color: #a35200; } .state { color: #555; font-size: 13px; }
.sents td { border: none; padding: 1px 4px; font-size: 13px; }
.bar { width: 90px; background: #eef; }
.bar span { display: block; height: 9px; background: #4c6ef5; }
.null { color: #888; font-style: italic; }
.sampled { margin-top: 3px; font-size: 13px; }
.legend span { margin-right: 10px; }
"""


def write_report(*, logs: Sequence[DecisionLog], out: str | Path, k: int = 5,
                 map_every: int = 1, title: str | None = None) -> Path:
    """Write the report of one log, or of two side by side, to `out` (atomically)."""
    if not 1 <= len(logs) <= 2:
        raise ValueError("the report shows one log, or two side by side")
    for one in logs:
        require_text(one)
    page = render_report(logs=logs, k=k, map_every=map_every, title=title)
    out = Path(out)
    write_atomic(out, page)
    return out


def render_report(*, logs: Sequence[DecisionLog], k: int = 5, map_every: int = 1,
                  title: str | None = None) -> str:
    """The report as an HTML string."""
    title = title or "Relevance report: " + " vs ".join(lg.label for lg in logs)
    maps = [map_pictures(lg, every=map_every) for lg in logs]
    steps = sorted(set().union(*(lg.steps() for lg in logs)))
    body = [
        f"<h1>{_e(title)}</h1>",
        '<p class="legend">Marked words of a sampled sentence: '
        '<span class="w-action">action word</span><span class="w-state">state word</span>'
        "(other words: background, or dropped as stop words and rare words). Probability bars "
        "fill at five times the uniform probability of the agent's candidates.</p>",
        _nav(steps),
        _section("games", "Games", _games_table(logs)),
        _section("entropy", "Relevance entropy over the game", _entropy(logs)),
        _section("sentences", "Sentences ranked first most often",
                 _cols([_sentence_table(lg) for lg in logs], logs)),
        _section("associations", "Strongest word-to-game-attribute associations",
                 _cols([_association_table(lg) for lg in logs], logs)),
        _section("timeline", "Timeline", _timeline(logs, maps, steps, k)),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "img-src data:; style-src 'unsafe-inline'\">"
            f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _section(ident: str, heading: str, content: str) -> str:
    return f'<section id="{ident}"><h2>{_e(heading)}</h2>\n{content}\n</section>'


def _nav(steps: list[int]) -> str:
    parts = [f'<a href="#{i}">{_e(h)}</a>' for i, h in (
        ("games", "games"), ("entropy", "entropy"), ("sentences", "sentences"),
        ("associations", "associations"), ("timeline", "timeline"))]
    jumps = " ".join(f'<a href="#step-{t}">{t}</a>' for t in steps)
    return f"<nav>{' '.join(parts)}<br><span class=\"muted\">steps:</span> {jumps}</nav>"


def _cols(parts: list[str], logs: Sequence[DecisionLog]) -> str:
    cells = "".join(f'<div class="col"><h3>{_e(lg.label)}</h3>{part}</div>'
                    if len(logs) > 1 else f'<div class="col">{part}</div>'
                    for lg, part in zip(logs, parts, strict=True))
    return (f'<div class="cols" style="grid-template-columns: repeat({len(parts)}, '
            f'minmax(0, 1fr))">{cells}</div>')


def _games_table(logs: Sequence[DecisionLog]) -> str:
    views = [summary.overview(lg) for lg in logs]
    head = "".join(f"<th>{_e(lg.label)}</th>" for lg in logs)
    rows = "".join(f"<tr><th>{_e(key)}</th>" + "".join(
        f"<td>{_e('-' if v[key] is None else v[key])}</td>" for v in views) + "</tr>"
        for key in views[0])
    notes = "".join(f'<p class="muted">{_e(lg.path.name)}: no state snapshots, so no maps '
                    "(play with --log-states or --report).</p>"
                    for lg in logs if not lg.states)
    cut = "".join(f'<p class="muted">{_e(lg.path.name)}: line {lg.cut_line} was cut off and '
                  "is left out.</p>" for lg in logs if lg.cut_line)
    return f"<table><tr><th></th>{head}</tr>{rows}</table>{notes}{cut}"


def _entropy(logs: Sequence[DecisionLog]) -> str:
    series = {lg.label: summary.entropy_by_step(lg) for lg in logs}
    if not any(s.get("all") for s in series.values()):
        return '<p class="muted">No decision had two or more candidates.</p>'
    png = entropy_plot(series)
    return (f'<img alt="normalised relevance entropy by step" src="{data_uri(png)}">'
            '<p class="muted">Mean over the agents of each step of the entropy of the '
            "sentence-relevance distribution divided by its maximum (1: uniform, 0: certain)."
            "</p>")


def _sentence_table(log: DecisionLog) -> str:
    uses = summary.sentence_use(log)
    rows = []
    for u in uses:
        text = f"#{u.id} {_e(u.text)}" if u.id >= 0 else '<span class="null">NULL</span>'
        units = ", ".join(f"{_e(w)} {n}" for w, n in u.by_unit.most_common())
        rows.append(f"<tr><td>{text}</td><td>{u.top}</td><td>{u.sampled}</td>"
                    f"<td>{units or '-'}</td><td>{u.mean_p:.4f}</td></tr>")
    return ("<table><tr><th>sentence</th><th>first</th><th>sampled</th><th>first for</th>"
            f"<th>mean p when first</th></tr>{''.join(rows)}</table>")


def _association_table(log: DecisionLog) -> str:
    source, rows = summary.associations(log)
    if not rows:
        return '<p class="muted">None: no action- or state-labelled words were sampled.</p>'
    if source == "weights":
        note = ("Learned output weights w of (word under its predicate label) x (game "
                "attribute), mean over the decisions that logged them.")
        head = "mean weight"
    else:
        note = ("This log holds no learned weights: co-occurrence of labelled words with the "
                "chosen action's and the state's words, as log lift over chance.")
        head = "log lift"
    body = "".join(
        f'<tr><td><span class="w-{_e(a.label)}">{_e(a.word)}</span> ({_e(a.label)})</td>'
        f"<td>{_e(a.attribute)}</td><td>{a.strength:+.5f}</td><td>{a.count}</td></tr>"
        for a in rows)
    return (f'<p class="muted">{_e(note)}</p><table><tr><th>word</th><th>game attribute</th>'
            f"<th>{head}</th><th>decisions</th></tr>{body}</table>")


def _timeline(logs, maps, steps: list[int], k: int) -> str:
    by_step = [lg.by_step() for lg in logs]
    out = []
    for t in steps:
        turn = next((r.get("turn") for b in by_step for r in b.get(t, ())), None)
        cells = []
        for recs, pics in zip(by_step, maps, strict=True):
            pic = (f'<img class="map" alt="map at step {t}" src="{data_uri(pics[t])}">'
                   if t in pics else "")
            cards = "".join(_agent_card(r, k) for r in recs.get(t, ())) or \
                '<p class="muted">no decisions at this step</p>'
            cells.append(f'<div class="stepbody">{pic}<div class="cards">{cards}</div></div>')
        turn_text = f" (turn {turn})" if turn is not None else ""
        out.append(f'<div class="step" id="step-{t}"><h3>Step {t}{_e(turn_text)}</h3>'
                   f"{_cols(cells, logs)}</div>")
    finals = []
    for lg, pics in zip(logs, maps, strict=True):
        final = [s for s, rec in lg.states.items() if rec.get("final")]
        finals.append(f'<img class="map" alt="final state" src="{data_uri(pics[final[0]])}">'
                      if final and final[0] in pics else "")
    if any(finals):
        out.append(f'<div class="step" id="final"><h3>Final state</h3>{_cols(finals, logs)}'
                   "</div>")
    return "\n".join(out)


def _prior_block(rec: dict) -> str:
    """The text reader's side of a decision (text-prior methods): the moves it advised most,
    and the sentences it read for them beside their relevance."""
    top = rec.get("prior_top")
    if not top:
        return ""
    advised = "; ".join(f"{_e(' '.join(m['labels']))} {m['p']:.2f}" for m in top)
    rows = "".join(f"<tr><td>{s['relevance']:.3f}</td><td>#{s['sentence']} {_e(s['text'])}"
                   "</td></tr>" for s in rec.get("prior_sentences") or ())
    null = rec.get("prior_null")
    null_text = "" if null is None else f", NULL (no advice) {null:.3f}"
    return (f'<div class="prior">reader advises: {advised}'
            f'<div class="muted">sentences it read{null_text}</div>'
            f'<table class="sents">{rows}</table></div>')


def _agent_card(rec: dict, k: int) -> str:
    who = ", ".join(rec.get("agent_labels") or ()) or "?"
    q, rank, n = q_rank(rec)
    qtext = f' <span class="muted">Q {q:.4f}, rank {rank} of {n}</span>' if q is not None else ""
    parts = [f'<div class="agent"><div class="who">{_e(rec["agent"])} ({_e(who)}) &rarr; '
             f'<span class="act">{_e(action_words(rec))}</span>{qtext}</div>']
    if rec.get("state_labels") is not None:
        parts.append(f'<div class="state">state: {_e(", ".join(rec["state_labels"]) or "-")}'
                     "</div>")
    parts.append(_prior_block(rec))
    sents = rec.get("sentences")
    if sents is None:
        if not rec.get("prior_top"):
            parts.append('<div class="muted">no text record</div>')
        parts.append("</div>")
        return "".join(parts)
    ent = rec.get("relevance_entropy")
    parts.append(f'<div class="muted">{rec.get("num_candidates", "?")} candidates, '
                 f"normalised entropy {'-' if ent is None else f'{ent:.3f}'}</div>")
    # Bars fill at 5x the uniform probability (or the top one, if higher): a uniform
    # distribution shows as short equal bars, a concentrated one as a long first bar.
    n = rec.get("num_candidates") or len(sents)
    full = max(max((s["p"] for s in sents[:k]), default=0.0), 5.0 / max(n, 1))
    rows = []
    for s in sents[:k]:
        text = (f"#{s['id']} {_e(s['text'])}" if s["id"] >= 0
                else '<span class="null">NULL (no sentence)</span>')
        rows.append(f'<tr><td>{s["p"]:.4f}</td><td class="bar" title="{s["p"] * n:.2f} x '
                    f'uniform"><span style="width: {100 * s["p"] / full:.0f}%"></span></td>'
                    f"<td>{text}</td></tr>")
    parts.append(f'<table class="sents">{"".join(rows)}</table>')
    sampled = rec.get("sampled_sentence")
    if sampled is not None and sampled >= 0 and rec.get("sampled_text"):
        marked = "".join(_e(piece) if label is None else
                         f'<span class="w-{label}">{_e(piece)}</span>'
                         for piece, label in mark_words(rec["sampled_text"],
                                                        word_labels=rec.get("word_labels") or []))
        parts.append(f'<div class="sampled">sampled #{sampled}: {marked}</div>')
    elif sampled is not None:
        parts.append('<div class="sampled null">sampled: NULL (no sentence)</div>')
    parts.append("</div>")
    return "".join(parts)
