"""The relevance report: one self-contained HTML page of what the model read over a game.

Sections: the games (method, manual, budget, result), relevance entropy over the game (a plot),
per unit type a sentence x step heatmap of relevance, word labels by part of speech, the
sentences ranked first most often and by which unit types, the strongest learned
word-to-game-attribute associations, and a timeline with the map of every step and, per agent,
the top sentences with their probabilities and the sampled sentence with its action and state
words marked. Given two logs (say text and random-text) every section shows them side by side,
and a comparison adds each measure of both with the difference and its 95% interval.

Everything is inline (CSS, plots and maps as data: URIs) and a Content-Security-Policy forbids
loading anything else, so the page opens offline and can be mailed as one file.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from nlmcs.experiments.relevance import measures, plots, summary
from nlmcs.experiments.relevance.log import DecisionLog, require_text
from nlmcs.experiments.relevance.maps import map_pictures
from nlmcs.experiments.relevance.plots import data_uri
from nlmcs.experiments.relevance.views import action_words, mark_words, q_rank
from nlmcs.files import write_atomic

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1400px; padding: 0 18px;
       color: #222; background: #fafafa; }
h1 { margin: 18px 0 4px; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 3px; margin-top: 30px; }
nav a { margin-right: 6px; } .muted { color: #777; }
.verdict { font-style: italic; margin: 2px 0; }
table { border-collapse: collapse; background: #fff; }
td, th { border: 1px solid #e2e2e2; padding: 3px 6px; vertical-align: top; text-align: left; }
th { background: #f0f0f0; }
.cols { display: grid; gap: 14px; }
.col { min-width: 0; }
.col img, section > img { max-width: 100%; height: auto; }
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
    sections = [
        ("games", "Games", _games_table(logs)),
        ("entropy", "Relevance entropy over the game", _entropy(logs)),
    ]
    if len(logs) == 2:
        sections.append(("compare", f"{logs[1].method or 'B'} vs {logs[0].method or 'A'}",
                         compare_section(measures.compare_logs(*logs), logs, paired=False)))
    sections += [
        ("units", "Relevance by unit type, sentence and step", unit_section(logs)),
        ("labels", "Word labels by part of speech", pos_section(logs)),
        ("sentences", "Sentences ranked first most often",
         _cols([_sentence_table(lg) for lg in logs], logs)),
        ("associations", "Strongest word-to-game-attribute associations",
         _cols([_association_table(lg) for lg in logs], logs)),
        ("timeline", "Timeline", _timeline(logs, maps, steps, k)),
    ]
    jumps = " ".join(f'<a href="#step-{t}">{t}</a>' for t in steps)
    return page(title, sections, extra_nav=f'<br><span class="muted">steps:</span> {jumps}')


LEGEND = ('<p class="legend">Marked words of a sampled sentence: '
          '<span class="w-action">action word</span><span class="w-state">state word</span>'
          "(other words: background, or dropped as stop words and rare words). Probability bars "
          "fill at five times the uniform probability of the agent's candidates.</p>")


def page(title: str, sections: Sequence[tuple[str, str, str]], *, extra_nav: str = "") -> str:
    """A self-contained HTML page of (id, heading, HTML) sections with a contents line."""
    nav = " ".join(f'<a href="#{i}">{esc(h.split(",")[0].lower())}</a>' for i, h, _ in sections)
    body = [f"<h1>{esc(title)}</h1>", LEGEND, f"<nav>{nav}{extra_nav}</nav>",
            *(_section(i, h, c) for i, h, c in sections)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "img-src data:; style-src 'unsafe-inline'\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def compare_section(rows: Sequence[measures.Comparison], logs: Sequence[DecisionLog], *,
                    paired: bool, names: Sequence[str] | None = None) -> str:
    """The measures of two logs (or arms) and B - A with 95% intervals: a figure and a table."""
    if not rows:
        return '<p class="muted">No decision of both carries a measure.</p>'
    a, b = names or [lg.method or lg.path.name for lg in logs]
    unit = "pairs of games" if paired else "steps (fewer of the two)"
    how = ("per-game means paired by seed: paired bootstrap interval (scipy, 10,000 "
           "resamples) and Wilcoxon signed-rank p" if paired else
           "means over steps; interval from resampling each game's steps (scipy bootstrap, "
           "10,000 resamples): one game each, so it speaks for these two games only")
    png = plots.comparison_plot(rows, a=a, b=b, title=f"{b} vs {a}: {how.split(':')[0]}")
    head = (f"<tr><th>measure</th><th>{esc(a)}</th><th>{esc(b)}</th><th>{esc(b)} &minus; "
            f"{esc(a)}</th><th>95% interval</th><th>{unit}</th>"
            + ("<th>p</th>" if paired else "") + "</tr>")
    body = "".join(
        f"<tr><td>{esc(r.title)}</td><td>{r.a:.4f}</td><td>{r.b:.4f}</td><td>{r.diff:+.4f}</td>"
        f"<td>{_interval(r)}</td><td>{r.n}</td>"
        + (f"<td>{r.p:.3g}</td>" if paired else "") + "</tr>" for r in rows)
    return (f'<img alt="{esc(b)} vs {esc(a)}" src="{data_uri(png)}">'
            f'<p class="muted">{esc(how)}.</p><table>{head}{body}</table>')


def _interval(r: measures.Comparison) -> str:
    if r.low != r.low or r.high != r.high:  # nan: too few values
        return "- (too few)"
    return f"[{r.low:+.4f}, {r.high:+.4f}]"


def unit_section(logs: Sequence[DecisionLog], *, limit: int = 4) -> str:
    """Per unit type (most decisions first), a sentence x step heatmap of mean relevance for
    each log, side by side on one colour scale."""
    units = list(dict.fromkeys(u for lg in logs for u in measures.unit_types(lg)))[:limit]
    if not units:
        return '<p class="muted">No decision had candidate sentences.</p>'
    out = ['<p class="muted">Rows: the sentences with the most relevance for the unit type '
           "over the game; cells: their probability times the number of candidate sentences "
           "(1: what a uniform pick gives), averaged over that step's decisions of this unit "
           "type. A sentence outside a decision's logged top 20 gets the probability left over, "
           "shared evenly by the candidates not listed. White is uniform, red above, blue "
           f"below, on one log scale from 1/{plots.RATIO_LIMIT:g}x to {plots.RATIO_LIMIT:g}x "
           "for every panel, unit type and report, so a colour is the same ratio "
           "everywhere.</p>"]
    for unit in units:
        grids = [measures.relevance_grid(lg, unit) for lg in logs]
        cells = [f'<img alt="{esc(unit)} relevance" src="' + data_uri(plots.grid_plot(
            g, title=f"{unit}: {g.decisions} decisions")) + '">'
            if g.sentences else '<p class="muted">no decisions of this unit type</p>'
            for g in grids]
        out.append(f"<h3>{esc(unit)}</h3>{_cols(cells, logs)}")
    return "".join(out)


def pos_section(logs: Sequence[DecisionLog]) -> str:
    """How the sampled sentences' words were labelled, by part of speech, per log."""
    tables = [measures.pos_labels(lg) for lg in logs]
    if not any(tables):
        return ('<p class="muted">These logs carry no parts of speech (written before '
                "records had word_pos).</p>")
    # one panel per log that has tags (a log compared with itself still gets two)
    png = plots.pos_plot({f"{lg.label}{' ' * i}": t for i, (lg, t)
                          in enumerate(zip(logs, tables, strict=True)) if t})
    parts = []
    for table in tables:
        rows = "".join(f"<tr><td>{esc(tag)}</td>" + "".join(
            f"<td>{counts.get(lab, 0)}</td>" for lab in measures.LABELS) + "</tr>"
            for tag, counts in table.items())
        parts.append("<table><tr><th>part of speech</th>" + "".join(
            f"<th>{lab}</th>" for lab in measures.LABELS) + f"</tr>{rows}</table>")
    return (f'<img alt="word labels by part of speech" src="{data_uri(png)}">'
            '<p class="muted">Words of the sampled sentences (kept words only) by the part of '
            "speech of their slot in the parse; a random-text twin keeps the original's parse "
            "slots, so its words sit in the same parts of speech with other words in them.</p>"
            + _cols(parts, logs))


def esc(text) -> str:
    """HTML-escaped text (quotes too, for attributes)."""
    return html.escape(str(text), quote=True)


def _section(ident: str, heading: str, content: str) -> str:
    return f'<section id="{ident}"><h2>{esc(heading)}</h2>\n{content}\n</section>'


def _cols(parts: list[str], logs: Sequence[DecisionLog]) -> str:
    cells = "".join(f'<div class="col"><h3>{esc(lg.label)}</h3>{part}</div>'
                    if len(logs) > 1 else f'<div class="col">{part}</div>'
                    for lg, part in zip(logs, parts, strict=True))
    return (f'<div class="cols" style="grid-template-columns: repeat({len(parts)}, '
            f'minmax(0, 1fr))">{cells}</div>')


def _games_table(logs: Sequence[DecisionLog]) -> str:
    views = [summary.overview(lg) for lg in logs]
    head = "".join(f"<th>{esc(lg.label)}</th>" for lg in logs)
    rows = "".join(f"<tr><th>{esc(key)}</th>" + "".join(
        f"<td>{esc('-' if v[key] is None else v[key])}</td>" for v in views) + "</tr>"
        for key in views[0])
    notes = "".join(f'<p class="muted">{esc(lg.path.name)}: no state snapshots, so no maps '
                    "(played with --no-log-states, or logged before states were).</p>"
                    for lg in logs if not lg.states)
    cut = "".join(f'<p class="muted">{esc(lg.path.name)}: line {lg.cut_line} was cut off and '
                  "is left out.</p>" for lg in logs if lg.cut_line)
    return f"<table><tr><th></th>{head}</tr>{rows}</table>{notes}{cut}"


def _entropy(logs: Sequence[DecisionLog]) -> str:
    series = {lg.label: summary.entropy_by_step(lg) for lg in logs}
    if not any(s.get("all") for s in series.values()):
        return '<p class="muted">No decision had two or more candidates.</p>'
    png = plots.entropy_plot(series)
    return (f'<img alt="normalised relevance entropy by step" src="{data_uri(png)}">'
            '<p class="muted">Mean over the agents of each step of the entropy of the '
            "sentence-relevance distribution divided by its maximum (1: uniform, 0: certain)."
            "</p>")


def _sentence_table(log: DecisionLog) -> str:
    ranked = summary.sentence_use(log)
    none_first = ranked.uniform + ranked.tied
    note = (f'<p class="muted">{none_first} of {ranked.decisions} decisions ranked no sentence '
            f"first: {ranked.uniform} had uniform relevance, {ranked.tied} a tie at the top "
            "(their order is arbitrary, so they are not counted as firsts; their sampled "
            "sentences are).</p>") if none_first else ""
    rows = []
    for u in ranked.uses:
        text = f"#{u.id} {esc(u.text)}" if u.id >= 0 else '<span class="null">NULL</span>'
        units = ", ".join(f"{esc(w)} {n}" for w, n in u.by_unit.most_common())
        rows.append(f"<tr><td>{text}</td><td>{u.top}</td><td>{u.sampled}</td>"
                    f"<td>{units or '-'}</td><td>{u.mean_p:.4f}</td></tr>")
    return (note + "<table><tr><th>sentence</th><th>first</th><th>sampled</th><th>first for"
            f"</th><th>mean p when first</th></tr>{''.join(rows)}</table>")


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
        f'<tr><td><span class="w-{esc(a.label)}">{esc(a.word)}</span> ({esc(a.label)})</td>'
        f"<td>{esc(a.attribute)}</td><td>{a.strength:+.5f}</td><td>{a.count}</td></tr>"
        for a in rows)
    return (f'<p class="muted">{esc(note)}</p><table><tr><th>word</th><th>game attribute</th>'
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
        out.append(f'<div class="step" id="step-{t}"><h3>Step {t}{esc(turn_text)}</h3>'
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
    advised = "; ".join(f"{esc(' '.join(m['labels']))} {m['p']:.2f}" for m in top)
    rows = "".join(f"<tr><td>{s['relevance']:.3f}</td><td>#{s['sentence']} {esc(s['text'])}"
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
    parts = [f'<div class="agent"><div class="who">{esc(rec["agent"])} ({esc(who)}) &rarr; '
             f'<span class="act">{esc(action_words(rec))}</span>{qtext}</div>']
    if rec.get("state_labels") is not None:
        parts.append(f'<div class="state">state: {esc(", ".join(rec["state_labels"]) or "-")}'
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
    verdict = measures.relevance_verdict(rec)
    if verdict is not None:
        parts.append(f'<div class="verdict">{esc(verdict)}</div>')
    # Bars fill at 5x the uniform probability (or the top one, if higher): a uniform
    # distribution shows as short equal bars, a concentrated one as a long first bar.
    n = rec.get("num_candidates") or len(sents)
    full = max(max((s["p"] for s in sents[:k]), default=0.0), 5.0 / max(n, 1))
    rows = []
    for s, tie in zip(sents[:k], measures.tied(sents[:k]), strict=True):
        text = (f"#{s['id']} {esc(s['text'])}" if s["id"] >= 0
                else '<span class="null">NULL (no sentence)</span>')
        if "meaning_move" in s:  # text-meaning: how near the sentence is in meaning
            text += (f' <span class="muted">meaning: move {s["meaning_move"]:+.2f}, '
                     f'situation {s["meaning_situation"]:+.2f}</span>')
        mark = "= " if tie else ""  # tied with the sentence above
        rows.append(f'<tr><td>{mark}{s["p"]:.4f}</td><td class="bar" title="{s["p"] * n:.2f} x '
                    f'uniform"><span style="width: {100 * s["p"] / full:.0f}%"></span></td>'
                    f"<td>{text}</td></tr>")
    parts.append(f'<table class="sents">{"".join(rows)}</table>')
    sampled = rec.get("sampled_sentence")
    if sampled is not None and sampled >= 0 and rec.get("sampled_text"):
        marked = "".join(esc(piece) if label is None else
                         f'<span class="w-{label}">{esc(piece)}</span>'
                         for piece, label in mark_words(rec["sampled_text"],
                                                        word_labels=rec.get("word_labels") or []))
        parts.append(f'<div class="sampled">sampled #{sampled}: {marked}</div>')
    elif sampled is not None:
        parts.append('<div class="sampled null">sampled: NULL (no sentence)</div>')
    parts.append("</div>")
    return "".join(parts)
