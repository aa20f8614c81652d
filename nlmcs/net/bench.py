"""How fast the network answers: decisions per second of batched inference, by device.

A decision is one agent's choice among its legal moves. Positions come from built-in AI games
on the training map; each forward pass answers `batch` positions at once (1: one state with all
its agents, as the search asks; more: as training and batched self-play would). Encoding (the
game's words to tokens) is timed apart, since it runs in Python on the CPU whatever the device.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from nlmcs.net.checkpoint import Checkpoint
from nlmcs.net.features import stack
from nlmcs.net.model import agent_log_softmax, tensors


def sample_states(game, *, games: int, seed: int) -> list:
    """(state, player) at every decision of `games` built-in AI games."""
    from nlmcs.games.runner import GameHook, play_game
    from nlmcs.seeds import game_seed

    out = []

    class Keep(GameHook):
        def on_choice(self, state, player, joint):
            out.append((state.clone(), player))

    for i in range(games):
        play_game(game, {p: game.policy("builtin") for p in range(game.num_players)},
                  seed=game_seed(seed, i), hooks=[Keep()])
    return out


def bench_inference(checkpoint: Checkpoint, game, *, devices: list[str], batches: list[int],
                    games: int = 4, seed: int = 0, repeat: int = 3) -> list[dict]:
    """A row per (device, batch): positions and decisions per second, and (float64) the
    largest difference of the probabilities from the CPU's."""
    from nlmcs.net.features import Encoder

    torch.set_num_threads(1)
    encoder = Encoder(checkpoint.layout)
    states = sample_states(game, games=games, seed=seed)
    t0 = time.perf_counter()
    positions = [encoder.encode(state, player) for state, player in states]
    decisions = sum(len(p.agent_tok) for p in positions)
    encode_s = time.perf_counter() - t0
    rows = [{"device": "cpu (encoding, python)", "batch": 1, "positions": len(positions),
             "positions_per_s": len(positions) / encode_s,
             "decisions_per_s": decisions / encode_s, "max_diff_vs_cpu": None}]
    reference = {}
    for device in devices:
        net = checkpoint.net.to(device)
        for batch in batches:
            groups = [stack(positions[i:i + batch]) for i in range(0, len(positions), batch)]
            feeds = [tensors(g, device) for g in groups]
            best = np.inf
            with torch.inference_mode():
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    for t in feeds:
                        logits, value = net(**t)
                        agent_log_softmax(logits, t["cand_agent"], len(t["agent_tok"]))
                    if device.startswith("cuda"):
                        torch.cuda.synchronize()
                    best = min(best, time.perf_counter() - t0)
            probs = _probs(net.to(dtype=torch.float64), groups[0], device)
            net.to(dtype=torch.float32)
            reference.setdefault(batch, probs) if device == "cpu" else None
            diff = float(np.abs(probs - reference[batch]).max()) if batch in reference else None
            rows.append({"device": device, "batch": batch, "positions": len(positions),
                         "positions_per_s": len(positions) / best,
                         "decisions_per_s": decisions / best, "max_diff_vs_cpu": diff})
        rows.append(_bench_fit(checkpoint, positions, device, repeat))
        checkpoint.net.to("cpu")
    return rows


def _bench_fit(checkpoint: Checkpoint, positions: list, device: str, repeat: int,
               batch: int = 128) -> dict:
    """Training speed: gradient steps on batches of `batch` positions (uniform targets; the
    weights are restored afterwards)."""
    import copy

    from nlmcs.net.samples import Samples
    from nlmcs.net.train import losses

    targets = []
    for p in positions:
        counts = np.bincount(p.cand_agent, minlength=len(p.agent_tok))
        targets.append((1.0 / counts[p.cand_agent]).astype(np.float32))
    samples = Samples.from_positions(positions, targets, [0.5] * len(positions))
    saved = copy.deepcopy(checkpoint.net.state_dict())
    net = checkpoint.net.to(device).train()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    steps = [np.arange(i, min(i + batch, len(samples))) for i in range(0, len(samples), batch)]
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for index in steps:
            policy, value = losses(net, samples, index, device)
            opt.zero_grad()
            (policy + value).backward()
            opt.step()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    checkpoint.net.load_state_dict(saved)
    checkpoint.net.eval()
    decisions = len(samples.agent_pos)
    return {"device": f"{device} (training)", "batch": batch, "positions": len(samples),
            "positions_per_s": len(samples) / best, "decisions_per_s": decisions / best,
            "max_diff_vs_cpu": None}


@torch.no_grad()
def _probs(net, group, device) -> np.ndarray:
    t = tensors(group, device, torch.float64)
    logits, value = net(**t)
    logp = agent_log_softmax(logits, t["cand_agent"], len(t["agent_tok"]))
    return np.concatenate([logp.exp().cpu().numpy(), torch.sigmoid(value).cpu().numpy()])
