"""The terminal view of a decision log (`nlmcs relevance show`), and the word marking that the
HTML report shares.

A decision record names the sampled sentence's kept words as stems with their predicate labels
(action, state, background), in sentence order; `mark_words` finds them in the sentence's text,
so the view can show the sentence as written with its action and state words marked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from manual_pipeline.words import stem
from nlmcs.errors import UserInputError
from nlmcs.experiments.relevance.log import DecisionLog
from nlmcs.experiments.relevance.measures import relevance_verdict, tied

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
ANSI = {"action": "\x1b[1;33m", "state": "\x1b[1;36m", "dim": "\x1b[2m", "bold": "\x1b[1m",
        "reset": "\x1b[0m"}  # fmt: skip
"""Action words bold yellow, state words bold cyan."""
PLAIN_MARK = {"action": "[{}]A", "state": "[{}]S"}
LEGEND_PLAIN = "[word]A: action word, [word]S: state word"


def mark_words(text: str, *, word_labels: list) -> list[tuple[str, str | None]]:
    """`text` cut into pieces, each with the label of the logged word it is (None for text
    between words and for words the model dropped or labelled background).

    Logged stems are matched to the text's words in order; a stem that cannot be found (the
    tokeniser split a word differently) is skipped rather than misplaced.
    """
    pieces: list[tuple[str, str | None]] = []
    labels = [(str(w), str(lab)) for w, lab in word_labels]
    k, last = 0, 0
    for m in _WORD.finditer(text):
        if k >= len(labels):
            break
        word = m.group(0)
        if stem(word.split("'")[0]) != labels[k][0]:
            # the logged stem may sit further on (an unmatched logged word is skipped)
            ahead = next((j for j in range(k + 1, min(k + 4, len(labels)))
                          if labels[j][0] == stem(word.split("'")[0])), None)  # fmt: skip
            if ahead is None:
                continue
            k = ahead
        label = labels[k][1]
        k += 1
        if label == "background":
            continue
        if m.start() > last:
            pieces.append((text[last : m.start()], None))
        pieces.append((word, label))
        last = m.end()
    if last < len(text):
        pieces.append((text[last:], None))
    return pieces


def select(log: DecisionLog, *, step: int | None = None, agent: str | None = None
           ) -> list[dict]:
    """Decision records at `step` (all steps if None) of `agent` (an agent id such as
    "unit:3", or a word of its labels such as "settlers" or "city"); refuses an empty pick."""
    picked = [r for r in log.decisions
              if (step is None or r["step"] == step)
              and (agent is None or r["agent"] == agent or agent in r.get("agent_labels", ()))]
    if not picked:
        steps = log.steps()
        span = f"steps {steps[0]}-{steps[-1]}" if steps else "no steps"
        agents = sorted({r["agent"] for r in log.decisions if step is None or r["step"] == step})
        what = " and ".join(x for x in (f"step {step}" if step is not None else "",
                                         f"agent {agent!r}" if agent else "") if x)
        raise UserInputError(f"{log.path}: no decision at {what} (the log has {span}; "
                             f"agents {', '.join(agents[:8]) or 'none'}"
                             f"{', ...' if len(agents) > 8 else ''})")
    return picked


def action_words(rec: dict) -> str:
    """The chosen action in words (its labels, else its raw form)."""
    if rec.get("action_labels"):
        return ", ".join(rec["action_labels"])
    action = rec.get("action")
    return " ".join(str(a) for a in action) if action else "(no action)"


def q_rank(rec: dict) -> tuple[float | None, int | None, int]:
    """(Q of the chosen action, its rank among the candidates from 1, number of candidates)."""
    cands = rec.get("candidates") or []
    chosen = rec.get("action")
    q = next((c.get("q") for c in cands if c.get("action") == chosen), None)
    if q is None:
        return None, None, len(cands)
    rank = 1 + sum(1 for c in cands if (c.get("q") or 0.0) > q)
    return q, rank, len(cands)


def show_lines(records: list[dict], *, k: int = 5, colour: bool = False) -> Iterator[str]:
    """The terminal view of decision records, line by line."""
    c = ANSI if colour else dict.fromkeys(ANSI, "")
    yield (f"{c['action']}action words{c['reset']}, {c['state']}state words{c['reset']}"
           if colour else LEGEND_PLAIN)
    for rec in records:
        yield ""
        yield from _record_lines(rec, k=k, c=c, colour=colour)


def _record_lines(rec: dict, *, k: int, c: dict, colour: bool) -> Iterator[str]:
    who = ", ".join(rec.get("agent_labels") or ()) or "?"
    q, rank, n = q_rank(rec)
    qtext = f"  Q {q:.4f}, rank {rank} of {n}" if q is not None else ""
    yield (f"{c['bold']}step {rec['step']}{c['reset']}  turn {rec.get('turn', '?')}  "
           f"{rec['agent']} ({who})  chose: {action_words(rec)}{qtext}")
    if rec.get("state_labels") is not None:
        yield f"  state: {', '.join(rec['state_labels']) or '-'}"
    yield from _prior_lines(rec, k=k)
    if "sentences" not in rec:
        if "latent" in rec:
            yield "  no text: this method's hidden layer is latent states, not sentences"
        elif not rec.get("prior_top"):
            yield "  no text record for this decision"
        return
    entropy = rec.get("relevance_entropy")
    ent = f", normalised entropy {entropy:.3f}" if entropy is not None else ""
    yield f"  relevance over {rec.get('num_candidates', '?')} candidates (NULL included){ent}"
    verdict = relevance_verdict(rec)
    if verdict is not None:
        yield f"  {verdict}"
    ties = tied(rec["sentences"][:k])
    for s, tie in zip(rec["sentences"][:k], ties, strict=True):
        text = s["text"] if s.get("id", -1) >= 0 else f"{c['dim']}NULL (no sentence){c['reset']}"
        ident = f"#{s['id']}" if s.get("id", -1) >= 0 else "-"
        near = (f"  [meaning: move {s['meaning_move']:+.2f}, situation "
                f"{s['meaning_situation']:+.2f}]" if "meaning_move" in s else "")
        yield f"  {'=' if tie else ' '} {s['p']:.4f}  {ident:>6}  {text}{near}"
    sampled = rec.get("sampled_sentence")
    if sampled is None:
        return
    if sampled < 0 or rec.get("sampled_text") is None:
        yield "  sampled: NULL (no sentence)"
        return
    yield f"  sampled #{sampled}: {marked_text(rec, colour=colour)}"


def _prior_lines(rec: dict, *, k: int) -> Iterator[str]:
    """A text prior's side of a decision (`uct-meaning`, `uct-text-prior`, ...): the moves it
    advised most and the sentences it read for them, as the HTML report shows them."""
    top = rec.get("prior_top")
    if not top:
        return
    yield "  reader advises: " + "; ".join(f"{' '.join(m['labels'])} {m['p']:.2f}" for m in top)
    null = rec.get("prior_null")
    yield "  sentences it read" + ("" if null is None else f", NULL (no advice) {null:.3f}")
    for s in (rec.get("prior_sentences") or ())[:k]:
        yield f"    {s['relevance']:.4f}  #{s['sentence']:>5}  {s['text']}"


def marked_text(rec: dict, *, colour: bool) -> str:
    """The sampled sentence with its action and state words marked (colours or brackets)."""
    out = []
    for piece, label in mark_words(rec["sampled_text"], word_labels=rec.get("word_labels") or []):
        if label is None:
            out.append(piece)
        elif colour:
            out.append(f"{ANSI[label]}{piece}{ANSI['reset']}")
        else:
            out.append(PLAIN_MARK[label].format(piece))
    return "".join(out)
