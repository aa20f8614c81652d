"""Hand-made decision records for the relevance tests: one of each kind of agent (civilization,
city, settlers, workers, warriors), shaped like the text model's records."""

from __future__ import annotations

import json
from pathlib import Path

TEXT_GAME = ["--method", "text", "--map", "tiny", "--seed", "1", "--steps", "3", "--rollouts",
             "6", "--depth", "3", "--no-progress"]  # fmt: skip
"""The seeded short text game the report tests play (see conftest.py)."""

SENTENCES = {
    3: "Settlers should build a city beside a river.",
    7: "Workers irrigate grassland near the city.",
    9: "Warriors fortify on hills to defend the city.",
    11: "A city should build warriors first.",
    12: "The civilization should research bronze working early.",
}
AGENTS = [  # agent, labels, action labels, state labels, top sentence, word labels
    ("civ:0", ["civilization"], ["research bronze working"], ["civilization"], 12,
     [["civil", "state"], ["research", "action"], ["bronz", "action"], ["work", "background"],
      ["earli", "state"]]),
    ("city:5", ["city"], ["build warriors"], ["city", "grassland", "small"], 11,
     [["citi", "state"], ["build", "action"], ["warrior", "action"], ["first", "background"]]),
    ("unit:1", ["settlers"], ["build city"], ["grassland", "river"], 3,
     [["settler", "state"], ["build", "action"], ["citi", "action"], ["besid", "background"],
      ["river", "state"]]),
    ("unit:2", ["workers"], ["irrigate"], ["grassland"], 7,
     [["worker", "state"], ["irrig", "action"], ["grassland", "state"], ["near", "background"],
      ["citi", "state"]]),
    ("unit:3", ["warriors"], ["fortify"], ["hills"], 9,
     [["warrior", "state"], ["fortifi", "action"], ["hill", "state"], ["defend", "action"],
      ["citi", "background"]]),
]  # fmt: skip


def decision(step: int, agent, labels, action, state, top, words) -> dict:
    others = [i for i in SENTENCES if i != top][:2]
    return {
        "step": step, "turn": step, "player": 0, "agent": agent,
        "action": ["act", action[0]],
        "candidates": [{"action": ["act", action[0]], "q": 0.6}, {"action": ["wait"], "q": 0.4}],
        "agent_labels": labels, "action_labels": action, "state_labels": state,
        "num_candidates": 4, "relevance_entropy": 0.8,
        "sentences": [{"id": top, "p": 0.5, "text": SENTENCES[top]},
                      {"id": others[0], "p": 0.2, "text": SENTENCES[others[0]]},
                      {"id": -1, "p": 0.2, "text": None},
                      {"id": others[1], "p": 0.1, "text": SENTENCES[others[1]]}],
        "sampled_sentence": top, "sampled_text": SENTENCES[top], "word_labels": words,
        "associations": [[w, lab, f"state {state[0]}", 0.01] for w, lab in words
                         if lab != "background"][:3],
    }  # fmt: skip


def records(steps: int = 2) -> list[dict]:
    return [decision(t, *agent) for t in range(steps) for agent in AGENTS]


def write(path: Path, recs: list[dict], *, tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs) + tail)
    return path
