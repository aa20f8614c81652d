"""Game-wide summaries of a decision log: relevance entropy by step, the sentences used most and
by which unit types, and the strongest word-to-game-attribute associations.

Associations come from the learned weights the log carries (`associations` of each text record,
see `nlmcs.model.associations`); a log written before it carried them falls back to counting how
often a word labelled action (state) co-occurred with the chosen action's (agent's state's) words,
with its lift over chance, and says so.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from nlmcs.experiments.relevance.log import DecisionLog, unit_type
from nlmcs.experiments.relevance.measures import decision_relevance


def entropy_by_step(log: DecisionLog) -> dict[str, dict[int, float]]:
    """Mean normalised relevance entropy per step: {"all": {step: mean}, unit type: {...}}."""
    sums: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in log.decisions:
        e = r.get("relevance_entropy")
        if e is None or r.get("num_candidates", 0) < 2:
            continue
        sums["all"][r["step"]].append(float(e))
        sums[unit_type(r)][r["step"]].append(float(e))
    return {who: {t: sum(v) / len(v) for t, v in sorted(by.items())}
            for who, by in sums.items()}


@dataclass
class SentenceUse:
    """How often one sentence (or NULL, id -1) was the top-ranked or the sampled one."""

    id: int
    text: str | None
    top: int = 0
    sampled: int = 0
    by_unit: Counter = field(default_factory=Counter)  # unit type -> times top
    mean_p: float = 0.0  # mean probability when top


@dataclass
class FirstRanked:
    """The sentences most often ranked first, and the decisions that ranked none first: their
    relevance uniform (`measures.decision_relevance`), or the top probability tied."""

    uses: list[SentenceUse]
    uniform: int = 0
    tied: int = 0
    decisions: int = 0


def sentence_use(log: DecisionLog, *, limit: int = 15) -> FirstRanked:
    """The sentences most often ranked first (arg-max relevance), with how often each was the
    sampled one and the unit types that ranked it first, most used first. A decision whose
    relevance is uniform, or whose top probability ties the next, ranks no sentence first (an
    arbitrary order among equals is not a preference); its sampled sentence still counts."""
    found: dict[int, SentenceUse] = {}
    texts: dict[int, str | None] = {}
    p_sum: Counter = Counter()
    out = FirstRanked([])
    for r in log.decisions:
        sents = r.get("sentences")
        if not sents:
            continue
        out.decisions += 1
        for s in sents:
            texts.setdefault(s["id"], s.get("text"))
        top = sents[0]
        judged = decision_relevance(r)
        if judged is not None and judged[2]:
            out.uniform += 1
        elif len(sents) > 1 and sents[1]["p"] == top["p"]:
            out.tied += 1
        else:
            use = found.setdefault(top["id"], SentenceUse(top["id"], top.get("text")))
            use.top += 1
            use.by_unit[unit_type(r)] += 1
            p_sum[top["id"]] += float(top["p"])
        sampled = r.get("sampled_sentence")
        if sampled is not None:
            found.setdefault(sampled, SentenceUse(sampled, texts.get(sampled,
                                                                     r.get("sampled_text"))))
            found[sampled].sampled += 1
    for use in found.values():
        use.mean_p = p_sum[use.id] / use.top if use.top else 0.0
    out.uses = sorted(found.values(), key=lambda u: (-u.top, -u.sampled, u.id))[:limit]
    return out


@dataclass(frozen=True)
class Association:
    word: str
    label: str  # action or state
    attribute: str  # e.g. "state river", "settlers: build city", "action type build_city"
    strength: float  # mean learned weight (or lift, for co-occurrence)
    count: int  # decisions it was seen in


def associations(log: DecisionLog, *, limit: int = 20) -> tuple[str, list[Association]]:
    """("weights" or "co-occurrence", the strongest associations, strongest first)."""
    if any("associations" in r for r in log.decisions):
        return "weights", _from_weights(log, limit)
    return "co-occurrence", _from_cooccurrence(log, limit)


def _from_weights(log: DecisionLog, limit: int) -> list[Association]:
    total: dict[tuple, float] = defaultdict(float)
    count: Counter = Counter()
    for r in log.decisions:
        for word, label, attribute, weight in r.get("associations", ()):
            key = (word, label, attribute)
            total[key] += float(weight)
            count[key] += 1
    rows = [Association(*key, total[key] / count[key], count[key]) for key in total]
    # strongest positive first: the groundings that raised Q most, on average
    rows.sort(key=lambda a: (-a.strength, -a.count, a.word))
    return rows[:limit]


def _from_cooccurrence(log: DecisionLog, limit: int) -> list[Association]:
    pair: Counter = Counter()
    word_n: Counter = Counter()
    attr_n: Counter = Counter()
    n = 0
    for r in log.decisions:
        labels = r.get("word_labels")
        if not labels:
            continue
        n += 1
        attrs = {"action": [f"action {a}" for a in r.get("action_labels", ())],
                 "state": [f"state {s}" for s in r.get("state_labels", ())]}
        for kind in attrs.values():
            attr_n.update(set(kind))
        for word, label in {(w, lab) for w, lab in labels if lab in attrs}:
            word_n[(word, label)] += 1
            for a in attrs[label]:
                pair[(word, label, a)] += 1
    rows = []
    for (word, label, attribute), c in pair.items():
        lift = c * n / (word_n[(word, label)] * attr_n[attribute])
        if c >= 2 and lift > 1.0:
            rows.append(Association(word, label, attribute, round(math.log(lift), 4), c))
    rows.sort(key=lambda a: (-a.strength * a.count, a.word))
    return rows[:limit]


def overview(log: DecisionLog) -> dict:
    """A few headline numbers of a log, for the report's summary table."""
    text = [r for r in log.decisions if "sentences" in r]
    ent = [r["relevance_entropy"] for r in text if r.get("relevance_entropy") is not None]
    nulls = sum(1 for r in text if r["sentences"] and r["sentences"][0]["id"] < 0)
    h = log.header or {}
    search = h.get("search") or {}
    return {
        "method": log.method or "?",
        "manual": log.manual or "?",
        "seed": h.get("seed", "?"),
        "map": _map_size(h.get("game_config") or {}),
        "budget": (f"{search['rollouts']} x {search['depth']}" if "rollouts" in search
                   else "?"),
        "steps": len(log.steps()),
        "decisions": len(log.decisions),
        "text decisions": len(text),
        "mean entropy": round(sum(ent) / len(ent), 4) if ent else None,
        "NULL ranked first": f"{nulls}/{len(text)}" if text else "-",
        "result": _result(log),
    }


def _map_size(config: dict) -> str:
    if "width" in config and "height" in config:
        return f"{config['width']} x {config['height']}"
    return "?"


def _result(log: DecisionLog) -> str:
    end = log.end
    if end is None:
        return "?"
    scores = " vs ".join(str(s) for s in end.get("scores", []))
    if end.get("winner") is not None:
        return f"player {end['winner']} won ({scores})"
    return f"{'draw' if end.get('finished') else 'undecided'} ({scores})"
