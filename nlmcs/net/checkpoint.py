"""The network's file: weights plus what they were trained for, so a misfit is refused.

A checkpoint is one `torch.save` file (read back with `weights_only=True`, so opening a file
never runs code from it) holding the format tag, the `Layout` (game, ruleset, state features,
token vocabulary), the network's config and how it was trained. A checkpoint of another game,
ruleset or feature layout is refused in one line naming the difference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from nlmcs.errors import UserInputError
from nlmcs.files import atomic_output, check_input
from nlmcs.games.base import Game
from nlmcs.net.features import Layout, layout_for
from nlmcs.net.model import NetConfig, PolicyValueNet

FORMAT = "nlmcs-net/1"
MAX_BYTES = 64 << 20


@dataclass
class Checkpoint:
    net: PolicyValueNet
    layout: Layout
    training: dict = field(default_factory=dict)
    """How it was made: corpus, generations, seeds, losses (free-form, JSON values)."""

    @classmethod
    def fresh(cls, game: Game, config: NetConfig | None = None, seed: int = 0, *,
              goal_words: bool = False) -> Checkpoint:
        config = config or NetConfig()
        layout = layout_for(game, goal_words)
        torch.manual_seed(seed)
        net = PolicyValueNet(len(layout.state_features), len(layout.tokens), config)
        return cls(net=net, layout=layout, training={"init_seed": seed})


def save(checkpoint: Checkpoint, path: str | Path) -> Path:
    """Write whole or not at all."""
    data = {"format": FORMAT, "layout": checkpoint.layout.to_dict(),
            "config": checkpoint.net.config.to_dict(),
            # as JSON text: free-form values (numpy floats) stay loadable with weights_only
            "training": json.dumps(checkpoint.training, default=_plain),
            "state_dict": {k: v.detach().to("cpu", torch.float32)
                           for k, v in checkpoint.net.state_dict().items()}}
    with atomic_output(path, binary=True) as fh:
        torch.save(data, fh)
    return Path(path)


def load(path: str | Path, game: Game | None = None) -> Checkpoint:
    """The checkpoint at `path`; with `game`, refused unless laid out for that game."""
    check_input(path, what="network checkpoint", max_bytes=MAX_BYTES)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch's reader fails on junk in many ways (struct.error, ...)
        raise UserInputError(f"{path}: not a network checkpoint ({type(err).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserInputError(f"{path}: not a network checkpoint (format "
                             f"{data.get('format') if isinstance(data, dict) else None!r}, "
                             f"expected {FORMAT!r})")
    try:
        layout = Layout.from_dict(data["layout"])
        if game is not None:
            check_fits(layout, game, path)
        config = NetConfig(**data["config"])
        _check_weights(data["state_dict"], layout, config, path)
        net = PolicyValueNet(len(layout.state_features), len(layout.tokens), config)
        net.load_state_dict(data["state_dict"])
    except (KeyError, TypeError, RuntimeError) as err:
        raise UserInputError(f"{path}: a damaged network checkpoint "
                             f"({type(err).__name__}: {str(err).splitlines()[0][:120]})"
                             ) from None
    net.eval()
    try:
        training = json.loads(data.get("training") or "{}")
    except (TypeError, ValueError):
        training = {}
    return Checkpoint(net=net, layout=layout, training=training)


def _check_weights(state: dict, layout: Layout, config: NetConfig, path) -> None:
    """Refuse, before any weight is allocated, weights whose shapes disagree with the recorded
    config (a hidden size of a million once asked for gigabytes before the refusal), and any
    weight that is not finite (NaN weights once passed `net show` and crashed mid-game). The
    expected shapes come from the network built on torch's meta device, which allocates
    nothing."""
    with torch.device("meta"):
        expected = {k: tuple(v.shape) for k, v in PolicyValueNet(
            len(layout.state_features), len(layout.tokens), config).state_dict().items()}
    if not isinstance(state, dict) or set(state) != set(expected):
        missing = sorted(set(expected) - set(state or {}))[:3]
        extra = sorted(set(state or {}) - set(expected))[:3]
        raise UserInputError(f"{path}: a damaged network checkpoint (weights missing {missing}, "
                             f"unexpected {extra})")
    for name, tensor in state.items():
        if not isinstance(tensor, torch.Tensor) or tuple(tensor.shape) != expected[name]:
            shape = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else type(tensor)
            raise UserInputError(f"{path}: a damaged network checkpoint ({name} has shape "
                                 f"{shape}; its recorded config makes {expected[name]})")
        if not bool(torch.isfinite(tensor).all()):
            raise UserInputError(f"{path}: a damaged network checkpoint ({name} holds NaN or "
                                 "infinite weights)")


def _plain(value):
    return value.item() if hasattr(value, "item") else str(value)


def check_fits(layout: Layout, game: Game, where: str | Path) -> None:
    if layout.goal_words and not game.goal_words():
        raise UserInputError(f"{where}: this network reads goal words, which game "
                             f"{game.name!r} does not give")
    here = layout_for(game, layout.goal_words)
    if (here.ruleset, here.ruleset_sha256) != (layout.ruleset, layout.ruleset_sha256) and \
            game.rules_of(layout.ruleset, layout.ruleset_sha256):
        here = replace(here, ruleset=layout.ruleset, ruleset_sha256=layout.ruleset_sha256)
    key = layout.mismatch(here)
    if key is not None:
        mine, theirs = getattr(layout, key), getattr(here, key)
        if key in ("state_features", "tokens"):
            first = next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=False))
                          if a != b),
                         min(len(mine), len(theirs)))
            mine = f"{len(mine)} entries, #{first} {mine[first] if first < len(mine) else None!r}"
            theirs = (f"{len(theirs)} entries, #{first} "
                      f"{theirs[first] if first < len(theirs) else None!r}")
        raise UserInputError(f"{where}: this network was trained for another game or layout "
                             f"({key}: {mine}, this game's: {theirs})")
