"""Learning the reader across games: fit its weights to outcome-labelled moves.

The target is the game's outcome (`nlmcs.reader.outcomes`): at sampled decisions, a few
candidate moves, each played out to the end of the game by the built-in AI. The reader is fit
to put its prior mass on the moves those outcomes back: the objective is the expected advantage
of a move drawn from the prior among the tried candidates, sum_a p(a) (margin(a) - mean margin),
in score points, with a small L2 penalty. Training maps are the outcome file's (salted seeds,
never an ablation's); one map in `VALID_EVERY` is held out, and the weights kept are those of the
epoch best on the held-out maps.

Why not the search's statistics (AlphaZero's visit counts)? They back the moves whose payoff
shows within the roll-outs' few turns, which is how the text model fitted long-range advice
away; margins at the game's end back advice that pays later. (A first version trained the reader
as a policy playing whole games by REINFORCE on the final margin; over 700 games its margin did
not move from the random player's, -22: one number per 1,300 moves is too little signal.)

Every weight is a parse feature or a matching weight, never a word, so what is learned is how to
read; the twin's reader is trained the same way, on the same labels, as the control.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from nlmcs import __version__
from nlmcs.errors import UserInputError
from nlmcs.fields import check_fields, option
from nlmcs.files import atomic_output, write_atomic, write_csv_rows
from nlmcs.reader.forward import build_query, collate
from nlmcs.reader.outcomes import OutcomeSpec, label_outcomes, outcome_game
from nlmcs.reader.weights import FORMAT, default_model, game_identity, model_from, net_for

MODEL_NAME = "reader.json"
OUTCOMES_NAME = "outcomes.jsonl"
CURVE_CSV = "curve.csv"
CURVE_PNG = "curve.png"
VALID_EVERY = 5


@dataclass(frozen=True)
class FitSpec:
    manual: str = "civ-guide"
    """Manual whose sentences the reader weighs."""
    epochs: int = option(200, low=1)
    """Fitting epochs (the best held-out one is kept)."""
    lr: float = option(0.05, above=0.0)
    """Adam's step."""
    l2: float = option(1e-3, low=0.0)
    """L2 penalty on the weights."""

    def __post_init__(self) -> None:
        check_fields(self, "fitting option")


@dataclass
class Decisions:
    """Labelled decisions as the network's questions, with their advantages."""

    queries: list
    advantage: list[np.ndarray]  # margin - mean margin, score points
    ai: np.ndarray  # advantage of the AI's own move (candidate 0)
    best: np.ndarray  # advantage of the best tried move

    def __len__(self) -> int:
        return len(self.queries)


def decisions(games: list[dict], index_of) -> Decisions:
    queries, adv = [], []
    for g in games:
        index = index_of(g["seed"])
        for r in g["rows"]:
            m = np.asarray(r["margin"], dtype=float)
            queries.append(build_query(index, tuple(r["agent"]), tuple(r["state"]),
                                       [tuple(a) for a in r["actions"]]))
            adv.append(m - m.mean())
    return Decisions(queries, adv, np.array([a[0] for a in adv]),
                     np.array([a.max() for a in adv]))


def expected_gain(net, batch, adv: torch.Tensor, n: int) -> torch.Tensor:
    """Mean over decisions of sum_a p(a) advantage(a), in score points."""
    logp, _ = net(batch)
    return (logp.exp() * adv).sum() / max(n, 1)


def fit(index, train: Decisions, valid: Decisions, spec: FitSpec, start: dict,
        progress: bool = True):
    """(network of the best held-out epoch, curve rows)."""
    from tqdm import tqdm

    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = net_for(start, index.feature_names)
    opt = torch.optim.Adam(net.parameters(), lr=spec.lr)
    bt, bv = collate(train.queries), collate(valid.queries)
    at = torch.as_tensor(np.concatenate(train.advantage).astype(np.float32))
    av = torch.as_tensor(np.concatenate(valid.advantage).astype(np.float32) if len(valid)
                         else np.zeros(0, np.float32))
    scale = float(at.std()) or 1.0
    curve, best, best_state = [], -np.inf, copy.deepcopy(net.state_dict())
    for epoch in tqdm(range(spec.epochs + 1), unit="epoch", disable=not progress):
        with torch.no_grad():
            gain_v = float(expected_gain(net, bv, av, len(valid))) if len(valid) else 0.0
        if gain_v > best or epoch == 0:
            best, best_state = gain_v, copy.deepcopy(net.state_dict())
        gain_t = expected_gain(net, bt, at, len(train))
        curve.append({"epoch": epoch, "train_gain": round(float(gain_t.detach()), 5),
                      "valid_gain": round(gain_v, 5)})
        if epoch == spec.epochs:
            break
        penalty = sum((p ** 2).sum() for p in net.parameters())
        loss = -gain_t / scale + spec.l2 * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.load_state_dict(best_state)
    return net, curve


def train_reader(outcomes: OutcomeSpec, spec: FitSpec, out: Path, *,
                 outcomes_path: Path | None = None, workers: int = 1, progress: bool = True,
                 log=print, executor=None, max_in_flight: int | None = None) -> dict:
    """Label games (resumable), fit the reader of `spec.manual`, write `out`/reader.json with
    its curve (CSV and PNG); the model."""
    from nlmcs.model.manuals import resolve_manual
    from nlmcs.model.variant_manuals import game_manual
    from nlmcs.reader.prior import reader_index

    out = Path(out)
    started = time.perf_counter()
    base = resolve_manual(spec.manual)
    game = outcome_game(outcomes)
    index = reader_index(base, game)
    path = Path(outcomes_path) if outcomes_path is not None else out / OUTCOMES_NAME
    games = label_outcomes(outcomes, path, workers=workers, progress=progress, log=log,
                           executor=executor, max_in_flight=max_in_flight)
    labelled = time.perf_counter() - started

    def index_of(seed: int):
        return reader_index(game_manual(base, game, seed), game) if outcomes.variant else index

    held = [g for g in games if g["index"] % VALID_EVERY == 0]
    kept = [g for g in games if g["index"] % VALID_EVERY != 0]
    train, valid = decisions(kept, index_of), decisions(held, index_of)
    if not len(train):
        raise UserInputError(f"{path}: no labelled decisions to train on; label more games")
    log(f"fitting the reader of {spec.manual} on {len(train)} decisions "
        f"({len(valid)} held out)")
    net, curve = fit(index, train, valid, spec, default_model(), progress=progress)
    best = max(curve, key=lambda c: c["valid_gain"])
    model = model_from(net, index.feature_names)
    model.update({
        "format": FORMAT, "manual": index.identity, "game": game_identity(game),
        "training": {
            "target": "game outcome: moves tried at sampled decisions, each played to the "
                      "end by the built-in AI; expected advantage under the prior",
            "outcomes": {"path": str(path), "spec": outcomes.identity(),
                         "games": len(games)},
            "fit": dataclasses.asdict(spec), "version": __version__,
            "decisions": {"train": len(train), "valid": len(valid)},
            "chosen_epoch": best["epoch"],
            "gain": {"train": best["train_gain"], "valid": best["valid_gain"],
                     "ai_valid": round(float(valid.ai.mean()), 5) if len(valid) else None,
                     "best_valid": round(float(valid.best.mean()), 5) if len(valid) else None},
            "seconds": {"label": round(labelled, 1),
                        "fit": round(time.perf_counter() - started - labelled, 1)},
        },
    })  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    write_csv_rows(out / CURVE_CSV, curve)
    write_curve_png(out / CURVE_PNG, curve, model)
    write_atomic(out / MODEL_NAME, json.dumps(model, indent=1) + "\n")
    return model


def write_curve_png(path: Path, curve: list[dict], model: dict) -> None:
    """Expected gain of the prior's move over a uniform pick, by epoch (train, held out), with
    the AI's own move and the best tried move on the held-out maps as references."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gain = model["training"]["gain"]
    epochs = [c["epoch"] for c in curve]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(epochs, [c["train_gain"] for c in curve], label="prior, training maps")
    ax.plot(epochs, [c["valid_gain"] for c in curve], label="prior, held-out maps")
    for key, label, style in (("ai_valid", "the AI's own move (held out)", ":"),
                              ("best_valid", "best tried move (held out)", "--")):
        if gain.get(key) is not None:
            ax.axhline(gain[key], color="grey", ls=style, lw=1, label=label)
    ax.axhline(0, color="black", lw=0.5)
    ax.axvline(model["training"]["chosen_epoch"], color="green", lw=0.8, label="kept")
    ax.set_xlabel("epoch")
    ax.set_ylabel("margin gain over a uniform pick")
    ax.set_title(f"reader of {model['manual']['name']}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_output(path, binary=True) as fh:
        fig.savefig(fh, format="png", dpi=100)
    plt.close(fig)
