"""The reader's model file: named weights in JSON, with what it read and what it played.

A reader file is meant to be read by people too: every weight is keyed by what it means
(`labels["pos=VERB"] = [action, state, background]`, `relevance["state-match"]`,
`advice["action-words"]`). It records the manual it was trained on (`index.manual_identity`), the
game and ruleset, and how it was trained. A reader is refused, in one line, for another manual
(another source), for a twin when it read a manual (or the other way round), or for another game
or ruleset. Twins of one manual share its source: a reader trained on one twin serves any twin
of that manual, as its weights name no word.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from nlmcs.errors import UserInputError
from nlmcs.files import read_document
from nlmcs.reader.forward import ADVICE, LABELS, RELEVANCE, ReaderNet

FORMAT = "nlmcs-reader/1"
MAX_BYTES = 20_000_000

DEFAULT = {
    "labels": {"pos=VERB": [1.0, 0.0, 0.0], "action-word": [1.0, 0.0, 0.0],
               "state-word": [0.0, 1.5, 0.0], "agent-word": [0.0, 0.5, 0.0]},
    "label_bias": [0.0, 0.0, 0.5],
    "relevance": {"state-match": 1.0, "state-other": -0.5, "action-match": 0.5},
    "advice": {"action-words": 1.0, "state-words": 0.5, "negated-action-words": -2.0},
}
"""Hand-set weights for a reader nobody trained: verbs and the game's action words are action
words, its state words state words; a sentence is relevant as it describes this state and
advises something the agent can do; a negated sentence advises against."""


def game_identity(game) -> dict:
    ruleset = getattr(game, "ruleset", None)
    return {"name": game.name, "ruleset": getattr(ruleset, "name", None),
            "ruleset_sha256": (getattr(ruleset, "sha256", None) or "")[:16] or None}


def default_model() -> dict:
    return {"format": FORMAT, "manual": None, "game": None, "training": None, **DEFAULT}


def net_for(model: dict, feature_names: list[str]) -> ReaderNet:
    """The network of `model` with its label rows laid out as an index's features (a feature
    the model never saw starts at zero)."""
    net = ReaderNet(len(feature_names))
    with torch.no_grad():
        for i, name in enumerate(feature_names):
            row = model["labels"].get(name)
            if row is not None:
                net.V[i] = torch.tensor(row, dtype=torch.float32)
        net.label_bias[:] = torch.tensor(model["label_bias"], dtype=torch.float32)
        net.u[:] = torch.tensor([model["relevance"].get(k, 0.0) for k in RELEVANCE])
        net.theta[:] = torch.tensor([model["advice"].get(k, 0.0) for k in ADVICE])
    return net


def model_from(net: ReaderNet, feature_names: list[str], **fields) -> dict:
    """A model file's content from a trained network (weights rounded for reading)."""
    def r(x: float) -> float:
        return round(float(x), 6)

    V = net.V.detach()
    return {
        "format": FORMAT, **fields,
        "labels": {name: [r(v) for v in V[i]] for i, name in enumerate(feature_names)},
        "label_bias": [r(v) for v in net.label_bias.detach()],
        "relevance": {k: r(v) for k, v in zip(RELEVANCE, net.u.detach(), strict=True)},
        "advice": {k: r(v) for k, v in zip(ADVICE, net.theta.detach(), strict=True)},
    }  # fmt: skip


def _numbers(value, n: int | None) -> bool:
    if not isinstance(value, list) or (n is not None and len(value) != n):
        return False
    return all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
               for v in value)


def load_model(path: str | Path) -> dict:
    """A reader file, checked; every problem is one `UserInputError` naming the file."""
    data = read_document(path, what="reader file", max_bytes=MAX_BYTES)
    if data.get("format") != FORMAT:
        raise UserInputError(f"{path}: not a reader file (format {data.get('format')!r}, "
                             f"expected {FORMAT!r}); make one with `nlmcs reader train`")
    labels = data.get("labels")
    if not isinstance(labels, dict) or not all(
            isinstance(k, str) and _numbers(v, len(LABELS)) for k, v in labels.items()):
        raise UserInputError(f"{path}: 'labels' must map feature names to "
                             f"{len(LABELS)} finite numbers")
    if not _numbers(data.get("label_bias"), len(LABELS)):
        raise UserInputError(f"{path}: 'label_bias' must be {len(LABELS)} finite numbers")
    for key, names in (("relevance", RELEVANCE), ("advice", ADVICE)):
        table = data.get(key)
        if not isinstance(table, dict) or not set(table) <= set(names) or not _numbers(
                list(table.values()), None):
            raise UserInputError(f"{path}: '{key}' must map some of {', '.join(names)} to "
                                 "finite numbers")
    for key in ("manual", "game"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise UserInputError(f"{path}: '{key}' must be an object")
    data["path"] = str(path)
    return data


def check_fits(model: dict, manual: dict, game) -> None:
    """Refuse a reader trained on another manual (or the twin/manual other), or another game."""
    where = model.get("path", "the reader")
    read = model.get("manual")
    if read is not None:
        if read.get("source_sha256") != manual["source_sha256"]:
            raise UserInputError(f"{where}: this reader was trained on manual "
                                 f"{read.get('name')!r}, not {manual['name']!r}; train one "
                                 f"for it (`nlmcs reader train --manual {manual['name']}`)")
        if bool(read.get("twin")) != manual["twin"]:
            what = "a random-text twin" if read.get("twin") else "the manual itself"
            raise UserInputError(f"{where}: this reader was trained on {what} of "
                                 f"{read.get('name')!r}; {manual['name']!r} is "
                                 f"{'a twin' if manual['twin'] else 'not a twin'}")
    trained = model.get("game")
    if trained is not None:
        here = game_identity(game)
        for key in ("name", "ruleset", "ruleset_sha256"):
            if trained.get(key) != here.get(key):
                raise UserInputError(f"{where}: this reader was trained on another game "
                                     f"({key} {trained.get(key)!r}, this game's "
                                     f"{here.get(key)!r})")
