"""What a manual offers a reader: how its sentences use the game's words, how much of that the
random twin keeps, and what its advice is worth in play.

A reader that grounds sentences in the game's labels can only profit from a manual whose
sentences speak of the game (its unit, terrain and action words), pair what to do with where to
do it (an action word and a state word in one sentence), and do so more than word salad with the
same word counts would (the twin keeps every count and loses the sentences). The last column
comes from the advice audit: whether the manual's advice is worth anything at a horizon.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

ACTION_WORDS = frozenset(("build", "irrigate", "mine", "road", "research", "fortify", "attack",
                          "move", "wait", "found", "settle", "defend", "explore"))
"""Verbs of the game's actions (labels' first words, and the verbs manuals use for them)."""


def game_words(vocabulary: Mapping[str, frozenset[str]]) -> tuple[frozenset[str], frozenset[str]]:
    """(action words, state and agent words) as single lower-case words of the game's labels,
    stop words left out."""
    from manual_pipeline.words import STOP_WORDS

    words = set()
    for kind in ("agent", "state", "action"):
        for label in vocabulary[kind]:
            words.update(label.lower().split())
    words -= STOP_WORDS  # "the" of "The Wheel" says nothing of the game
    actions = frozenset(w for w in words if w in ACTION_WORDS) | ACTION_WORDS
    return actions, frozenset(words - actions)


def sentence_words(manual) -> list[set[str]]:
    """The lower-cased words (lemmas too) of each sentence, in sentence order."""
    tokens = manual.tokens
    n = len(manual.sentences)
    out: list[set[str]] = [set() for _ in range(n)]
    for sid, lower, lemma in zip(tokens["sentence_id"].to_numpy(), tokens["lower"].to_numpy(),
                                 tokens["lemma"].to_numpy(), strict=True):
        if 0 <= sid < n:
            out[sid].add(str(lower))
            out[sid].add(str(lemma).lower())
    return out


def measures(manual, actions: frozenset[str], states: frozenset[str]) -> dict:
    """Counts of one manual (or twin): see the module docstring."""
    sents = sentence_words(manual)
    n = len(sents)
    with_game = [s & (actions | states) for s in sents]
    act = [bool(s & actions) for s in sents]
    sta = [bool(s & states) for s in sents]
    both = sum(a and b for a, b in zip(act, sta, strict=True))
    used = set().union(*with_game) if with_game else set()
    per = [len(s) for s in with_game]
    return {"sentences": n, "tokens": len(manual.tokens),
            "game_words_used": len(used),
            "game_word_coverage": round(len(used) / max(1, len(actions | states)), 3),
            "share_with_game_word": round(sum(bool(s) for s in with_game) / max(1, n), 3),
            "game_words_per_sentence": round(float(np.mean(per)) if per else 0.0, 2),
            "share_action_and_state": round(both / max(1, n), 3),
            "action_state_mi": round(action_state_information(sents, actions, states), 3)}


CUTS = {"action-state": "the sentences that name an action word and a state word of the game "
                        "together, against all the others"}
"""Properties a manual can be cut by (`nlmcs manual cut`): name -> what it keeps."""


def cut_sentences(manual, vocabulary, by: str) -> tuple[list[int], list[int]]:
    """(ids of the sentences with property `by`, ids of the others), in document order."""
    if by not in CUTS:
        raise ValueError(f"unknown cut {by!r}")
    actions, states = game_words(vocabulary)
    marked = [bool(s & actions) and bool(s & states) for s in sentence_words(manual)]
    return ([i for i, m in enumerate(marked) if m], [i for i, m in enumerate(marked) if not m])


def action_state_information(sents: Sequence[set[str]], actions: frozenset[str],
                             states: frozenset[str]) -> float:
    """Mutual information (bits) between the action word and the state word of the pairs that
    share a sentence: how much saying "irrigate" tells about *which* terrain the sentence names.
    The twin keeps how many pairs there are but not which, so this is what reading can use."""
    counts: dict[tuple[str, str], int] = {}
    for s in sents:
        for a in s & actions:
            for w in s & states:
                counts[a, w] = counts.get((a, w), 0) + 1
    total = sum(counts.values())
    if not total:
        return 0.0
    pa: dict[str, int] = {}
    ps: dict[str, int] = {}
    for (a, w), c in counts.items():
        pa[a] = pa.get(a, 0) + c
        ps[w] = ps.get(w, 0) + c
    return float(sum(c / total * math.log2(c * total / (pa[a] * ps[w]))
                     for (a, w), c in counts.items()))


def advice_worth(folder: Path | None) -> dict[str, str]:
    """Per horizon, 'mean worth (rules with p < 0.05 and positive / rules)' from an audit's
    summary.csv; {} without one."""
    if folder is None or not (Path(folder) / "summary.csv").is_file():
        return {}
    by_turns: dict[str, list[tuple[float, float]]] = {}
    with open(Path(folder) / "summary.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            try:
                worth, p = float(row["worth"]), float(row["signed_rank_p"])
            except (KeyError, ValueError):
                continue
            by_turns.setdefault(row.get("turns", "?"), []).append((worth, p))
    out = {}
    for turns, values in sorted(by_turns.items(), key=lambda kv: int(kv[0])):
        good = sum(1 for w, p in values if w > 0 and p < 0.05)
        mean = float(np.mean([w for w, _ in values]))
        out[f"advice_worth_{turns}"] = f"{mean:+.2f} ({good}/{len(values)} rules pay)"
    return out


GLOSS = {
    "sentences": "sentences (count)",
    "tokens": "words and punctuation (count)",
    "game_words_used": "distinct game words (action, unit, terrain) the text uses (count)",
    "game_word_coverage": "share of the game's words the text uses (0-1)",
    "share_with_game_word": "share of sentences naming at least one game word (0-1)",
    "game_words_per_sentence": "game words per sentence (mean)",
    "share_action_and_state": "share of sentences naming both an action and a state word (0-1)",
    "action_state_mi": "mutual information of action and state words in one sentence (bits)",
    "twin_share_action_and_state": "the same share in the word-permuted twin (0-1)",
    "twin_action_state_mi": "the same information in the twin (bits)",
    "mi_over_twin": "information the word order adds: manual - twin (bits; 0 = none)",
}
"""What each `manual stats` line measures, with its unit (printed beside it)."""


def gloss(key: str) -> str:
    """The line's meaning and unit; an advice-worth line says its horizon."""
    if key.startswith("advice_worth_"):
        return (f"mean worth of following the audited rules at {key.rsplit('_', 1)[1]} turns "
                "(score points; rules that pay at p < 0.05)")
    return GLOSS.get(key, "")


def readability_rows(manuals: Sequence, twins: Sequence, vocabulary, audits: Sequence) -> list:
    """One row per manual: its measures, the twin's pairs, the ratio, and the audit's worth."""
    actions, states = game_words(vocabulary)
    rows = []
    for manual, twin, audit in zip(manuals, twins, audits, strict=True):
        real = measures(manual, actions, states)
        salad = measures(twin, actions, states)
        rows.append({"manual": manual.name, **real,
                     "twin_share_action_and_state": salad["share_action_and_state"],
                     "twin_action_state_mi": salad["action_state_mi"],
                     "mi_over_twin": round(real["action_state_mi"] - salad["action_state_mi"], 3),
                     **advice_worth(audit)})
    return rows
