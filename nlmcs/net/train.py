"""Training the policy/value network: behaviour cloning on a corpus, then self-play generations.

Generation 0 clones the corpus's moves and results (`samples.replay_corpus`). Generation g plays
`games` self-play games with generation g-1's network (`selfplay`), fits g-1's weights to the
positions of the last `window` generations (visit shares and results as targets), and is judged
against the built-in AI and against generation g-1 on fixed seeds that no training game uses.
The folder holds a checkpoint per generation, each self-play game as its own file (written whole,
so a killed run replays nothing it finished), `curve.csv` / `curve.png`, and `net.pt`, the last
generation. A run resumes where it stopped when started again with the same settings; more
generations may be asked for later.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import time
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path

import numpy as np
import torch
from scipy.stats import binomtest

from nlmcs.errors import UserInputError
from nlmcs.files import atomic_output, sha256_file, write_atomic, write_csv_rows
from nlmcs.jobs import run_jobs
from nlmcs.net.checkpoint import Checkpoint, load, save
from nlmcs.net.model import NetConfig, agent_log_softmax, tensors
from nlmcs.net.samples import Samples, concat, load_samples
from nlmcs.net.selfplay import NetGameJob, match_game, selfplay_game
from nlmcs.net.spec import TrainSpec, eval_seeds, previous_seeds, stage_name
from nlmcs.runs import (
    FileStore,
    JsonLinesStore,
    code_state,
    locked,
    now,
    read_results,
    read_run,
    repair_tail,
    write_run,
)
from nlmcs.seeds import game_seed

RUN_FORMAT = "nlmcs-net-run/1"
OLD_RUN_NAME = "train.json"
"""Where an older version kept the run's settings (now in the run store's run.json)."""
CURVE_CSV = "curve.csv"
CURVE_PNG = "curve.png"
LATEST = "net.pt"


# --- fitting --------------------------------------------------------------------------------
def losses(net, samples: Samples, index: np.ndarray, device, dtype=torch.float32
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """(policy cross-entropy per agent with a target, value log-loss per position)."""
    batch, target, value = samples.batch(index)
    t = tensors(batch, device, dtype)
    logits, v = net(**t)
    logp = agent_log_softmax(logits, t["cand_agent"], len(batch.agent_tok))
    target_t = torch.as_tensor(target, dtype=dtype, device=device)
    with_target = (torch.zeros(len(batch.agent_tok), dtype=dtype, device=device)
                   .index_add_(0, t["cand_agent"], target_t) > 0).sum().clamp(min=1)
    policy = -(target_t * logp).sum() / with_target
    value_loss = torch.nn.functional.binary_cross_entropy_with_logits(
        v, torch.as_tensor(value, dtype=dtype, device=device))
    return policy, value_loss


def fit(net, samples: Samples, *, epochs: int, batch: int, lr: float, weight_decay: float,
        seed: int, device: str = "cpu", dtype=torch.float32, valid_share: float = 0.1,
        progress: Callable[[int, dict], None] | None = None) -> list[dict]:
    """AdamW over shuffled positions; the last `valid_share` of positions (whole games, as
    samples are stored game by game) is held out, and the weights of the epoch with the lowest
    held-out loss (policy + value) are kept: positions of one game share one result, so the
    value head overfits within a few epochs. A row per epoch (epoch 0: before any step)."""
    net.to(device=device, dtype=dtype)
    n = len(samples)
    n_valid = int(round(n * valid_share)) if n >= 20 else 0
    train_idx, valid_idx = np.arange(n - n_valid), np.arange(n - n_valid, n)
    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    rows, best = [], None
    for epoch in range(epochs + 1):
        if epoch:
            net.train()
            order = rng.permutation(train_idx)
            for start in range(0, len(order), batch):
                index = np.sort(order[start:start + batch])
                policy, value = losses(net, samples, index, device, dtype)
                opt.zero_grad()
                (policy + value).backward()
                opt.step()
        net.eval()
        with torch.no_grad():
            row = {"epoch": epoch}
            for name, idx in (("train", train_idx), ("valid", valid_idx)):
                row.update(_mean_losses(net, samples, idx, device, dtype, name))
        score = row["valid_policy"] + row["valid_value"] if n_valid else -epoch
        row["kept"] = False
        if best is None or score < best[0]:
            best = (score, epoch, copy.deepcopy(net.state_dict()))
        rows.append(row)
        if progress is not None:
            progress(epoch, row)
    net.load_state_dict(best[2])
    rows[best[1]]["kept"] = True
    net.to(device="cpu", dtype=torch.float32)
    return rows


def _mean_losses(net, samples, idx, device, dtype, name: str, chunk: int = 2048) -> dict:
    if not len(idx):
        return {f"{name}_policy": math.nan, f"{name}_value": math.nan}
    totals = np.zeros(2)
    for start in range(0, len(idx), chunk):
        part = idx[start:start + chunk]
        p, v = losses(net, samples, part, device, dtype)
        totals += np.array([float(p), float(v)]) * len(part)
    return {f"{name}_policy": totals[0] / len(idx), f"{name}_value": totals[1] / len(idx)}


# --- the run --------------------------------------------------------------------------------
def _check_run(out: Path, spec: TrainSpec) -> None:
    """Refuse a folder holding a run with other settings; record these in run.json (a folder of
    an older version keeps them in train.json, still read)."""
    identity = json.loads(json.dumps(spec.identity()))
    stored = read_run(out, fmt=RUN_FORMAT, what="a training run file",
                      required=("identity",)) if out.is_dir() else None
    if stored is None and (out / OLD_RUN_NAME).exists():
        path = out / OLD_RUN_NAME
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise UserInputError(f"{path}: not a training run file ({err})") from None
        if not isinstance(stored, dict):
            raise UserInputError(f"{path}: not a training run file (not a JSON object)")
    if stored is not None and not isinstance(stored.get("identity"), dict):
        raise UserInputError(f"{out}: its run file holds no settings; use another --out")
    if stored is not None and stored.get("identity") != identity:
        diff = sorted(k for k in identity if stored["identity"].get(k) != identity[k])
        raise UserInputError(f"{out} holds a run with other settings ({', '.join(diff)}); "
                             "use another --out or the same settings")
    run = {"created": now(), **(stored or {})}
    run.update(format=RUN_FORMAT, identity=spec.identity(), generations=spec.generations,
               updated=now(), code=code_state())
    write_run(out, run, results=None)  # each game's positions are a file of their own


def train_net(spec: TrainSpec, out: Path, *, executor: Executor | None = None,
              device: str = "cpu", log: Callable[[str], None] = print) -> list[dict]:
    """Run (or resume) the training in `out`, holding the folder's writer lock (a second
    training into it is refused); the learning curve's rows."""
    out = Path(out)
    with locked(out):
        return _train(spec, out, executor=executor, device=device, log=log)


def _train(spec: TrainSpec, out: Path, *, executor: Executor | None, device: str,
           log: Callable[[str], None]) -> list[dict]:
    from nlmcs.games import make_game

    torch.set_num_threads(1)
    _check_run(out, spec)
    game = make_game(spec.game, **spec.game_options())
    curve = _read_curve(out / CURVE_CSV)
    first = out / f"{stage_name(0)}.pt"
    if not first.exists():
        started = time.perf_counter()
        if spec.init is not None:  # a curriculum: an earlier network, judged on these games
            checkpoint = load(spec.init, game)
            if checkpoint.layout.goal_words != spec.goal_words:
                raise UserInputError(f"{spec.init}: this network reads "
                                     f"{'' if checkpoint.layout.goal_words else 'no '}goal "
                                     f"words; the run's --goal-words is {spec.goal_words}")
            row = {"generation": 0, "stage": "initial", "init": str(spec.init),
                   "init_sha256": sha256_file(spec.init)}
        else:
            checkpoint = Checkpoint.fresh(game, NetConfig(hidden=spec.hidden), seed=spec.seed,
                                          goal_words=spec.goal_words)
            clone = bool(spec.corpus and spec.bc_epochs)
            row = {"generation": 0, "stage": "behaviour cloning" if clone else "untrained"}
            if clone:
                row.update(_clone(checkpoint, spec, out, device, log))
        checkpoint.training.update({"generation": 0, "spec": spec.identity(), **row})
        _finish_stage(checkpoint, spec, out, 0, row, curve, started, executor, log)
    for generation in range(1, spec.generations + 1):
        if (out / f"{stage_name(generation)}.pt").exists():
            continue
        started = time.perf_counter()
        previous = out / f"{stage_name(generation - 1)}.pt"
        games = _selfplay(spec, out, generation, previous, executor, log)
        window = range(max(1, generation - spec.window + 1), generation + 1)
        parts = [load_samples(f)[0] for g in window
                 for f in sorted((out / stage_name(g)).glob("game-*.npz"))]
        selfplay_positions = sum(len(p) for p in parts)
        checkpoint = load(previous, game)
        mixed = _corpus_share(spec, out, checkpoint.layout, selfplay_positions, generation, log)
        # the held-out tail of the buffer is its last games: self-play ones, not the corpus's
        buffer = concat([*([mixed] if mixed is not None else []), *parts])
        log(f"generation {generation}: fitting {selfplay_positions} self-play positions of "
            f"generations {window.start}-{window.stop - 1}"
            + (f" and {len(mixed)} corpus positions" if mixed is not None else ""))
        rows = fit(checkpoint.net, buffer, epochs=spec.epochs, batch=spec.batch, lr=spec.lr,
                   weight_decay=spec.weight_decay, seed=spec.seed + generation, device=device,
                   progress=lambda e, r: log(f"  epoch {e}: " + losses_line(r)))
        row = {"generation": generation, "stage": "self-play", "positions": len(buffer),
               **_last_losses(rows), **games}
        checkpoint.training.update({"generation": generation, "spec": spec.identity(), **row})
        _finish_stage(checkpoint, spec, out, generation, row, curve, started, executor, log,
                      previous=previous)
    return curve


CORPUS_SAMPLES = "corpus-samples.npz"


def _corpus_samples(spec: TrainSpec, out: Path, layout, log) -> tuple[Samples, dict]:
    """The corpus's replayed positions, kept in the run folder after the first replay."""
    path = out / CORPUS_SAMPLES
    if path.exists():
        return load_samples(path)
    from corpus.shipped import find_corpus_dir
    from corpus.store import load_corpus
    from nlmcs.net.features import Encoder

    corpus = load_corpus(find_corpus_dir(spec.corpus))
    samples, report = replay_with_log(corpus, Encoder(layout), spec, log)
    meta = dataclasses.asdict(report)
    samples.save(path, meta)
    return samples, meta


def _corpus_share(spec: TrainSpec, out: Path, layout, n: int, generation: int, log
                  ) -> Samples | None:
    """`corpus_mix` x n corpus positions, drawn afresh each generation (None without any)."""
    if not spec.corpus or not spec.corpus_mix:
        return None
    samples, _ = _corpus_samples(spec, out, layout, log)
    rng = np.random.default_rng([spec.seed, generation, 7])
    k = min(len(samples), int(round(spec.corpus_mix * n)))
    index = np.sort(rng.choice(len(samples), size=k, replace=False))
    batch, target, value = samples.batch(index)
    return Samples(glob=batch.glob, value=value, agent_pos=batch.agent_pos.astype(np.int32),
                   agent_tok=batch.agent_tok, cand_agent=batch.cand_agent.astype(np.int32),
                   cand_tok=batch.cand_tok, target=target)


def _clone(checkpoint: Checkpoint, spec: TrainSpec, out: Path, device: str, log) -> dict:
    samples, report = _corpus_samples(spec, out, checkpoint.layout, log)
    log(f"behaviour cloning: {report['replayed']} of {report['games']} corpus games replayed "
        f"({report['positions']} positions, {report['decisions']} moves; skipped: "
        f"{report['skipped'] or 'none'})")
    rows = fit(checkpoint.net, samples, epochs=spec.bc_epochs, batch=spec.batch, lr=spec.lr,
               weight_decay=spec.weight_decay, seed=spec.seed, device=device,
               progress=lambda e, r: log(f"  epoch {e}: " + losses_line(r)))
    return {"corpus": spec.corpus, "corpus_games": report["replayed"],
            "positions": report["positions"], **_last_losses(rows)}


def losses_line(row: dict) -> str:
    return (f"policy {row['train_policy']:.3f} / {row['valid_policy']:.3f} held out, value "
            f"{row['train_value']:.3f} / {row['valid_value']:.3f}")


def replay_with_log(corpus, encoder, spec: TrainSpec, log):
    from nlmcs.net.samples import replay_corpus

    step = max(1, (spec.corpus_games or len(corpus.games)) // 10)
    return replay_corpus(corpus, encoder, games=spec.corpus_games or None,
                         on_game=lambda k, n: log(f"  replayed {k}/{n} corpus games")
                         if k % step == 0 or k == n else None)


def _last_losses(rows: list[dict]) -> dict:
    """The kept epoch's losses (and the held-out policy loss before the fit)."""
    first, last = rows[0], next(r for r in rows if r["kept"])
    return {"epochs": rows[-1]["epoch"], "kept_epoch": last["epoch"],
            "policy_loss_before": first["valid_policy"],
            **{k: last[k] for k in ("train_policy", "valid_policy", "train_value",
                                    "valid_value")}}


def _selfplay(spec: TrainSpec, out: Path, generation: int, net: Path, executor, log) -> dict:
    folder = out / stage_name(generation)
    folder.mkdir(exist_ok=True)
    todo = [i for i in range(spec.games) if not (folder / f"game-{i:04d}.npz").exists()]
    if len(todo) < spec.games:
        log(f"generation {generation}: {spec.games - len(todo)} self-play games kept")
    jobs = [(i, _game_job(spec, net, spec.opponent, game_seed(spec.seed, generation, i),
                          selfplay=True)) for i in todo]

    def save(job, result):
        index, _ = job
        result["samples"].save(folder / f"game-{index:04d}.npz",
                               {k: v for k, v in result.items() if k != "samples"})

    def kept(done: int) -> None:
        if done % max(1, spec.games // 10) == 0 or done == spec.games:
            log(f"generation {generation}: {done}/{spec.games} self-play games")

    # each game's positions are a whole file: the folder is the store
    store = FileStore(folder, save, stored=spec.games - len(todo), on_kept=kept,
                      describe=lambda job: f"self-play game {job[0]} of generation {generation}")
    run_jobs(jobs, _indexed_selfplay, store, executor, max_in_flight=None)
    metas = [load_samples(f)[1] for f in sorted(folder.glob("game-*.npz"))]
    seconds = [m.get("seconds", math.nan) for m in metas]
    return {"selfplay_games": len(metas), "selfplay_seconds_per_game": float(np.mean(seconds))}


def _game_job(spec: TrainSpec, net: Path, opponent: str, seed: int, *, selfplay: bool
              ) -> NetGameJob:
    noise = {"temperature_turns": spec.temperature_turns, "dirichlet_alpha": spec.dirichlet_alpha,
             "noise_share": spec.noise_share, "full_share": spec.full_share,
             "cheap_rollouts": spec.cheap_rollouts, "forced_k": spec.forced_k} if selfplay else {}
    return NetGameJob(net=str(net), opponent=opponent, game=spec.game,
                      game_options=spec.game_options(), seed=seed, rollouts=spec.rollouts,
                      net_depth=spec.net_depth, value_weight=spec.value_weight,
                      puct_c=spec.puct_c, prior_floor=spec.prior_floor, **noise)


def _indexed_selfplay(job):
    return selfplay_game(job[1])


def _indexed_match(job):
    index, game_job, sha = job
    return {"index": index, "net_sha256": sha, **match_game(game_job)}


def _judge(spec: TrainSpec, net: Path, opponent: str, executor, seeds: list[int], log,
           record: Path) -> dict:
    """Play the judging games of `net` against `opponent`, each appended to `record` as it ends
    (with the network's sha256, so rows of another network are never read): a killed run
    resumes its judging, and the stage's games stay a table a user can pair."""
    if not seeds:
        return {}
    sha = sha256_file(net)
    repair_tail(record)
    done = {row["index"]: row for row in read_results(record).rows
            if row.get("net_sha256") == sha and row.get("opponent") == opponent
            and row.get("index") in range(len(seeds)) and row.get("seed") == seeds[row["index"]]}
    jobs = [(i, _game_job(spec, net, opponent, s, selfplay=False), sha)
            for i, s in enumerate(seeds) if i not in done]
    if done:
        log(f"  {len(done)} of {len(seeds)} judging games against {opponent} kept")
    step = max(1, len(seeds) // 10)

    def kept(row: dict) -> None:
        done[row["index"]] = row
        if len(done) % step == 0 or len(done) == len(seeds):
            log(f"  judged {len(done)}/{len(seeds)} games against {opponent}")

    store = JsonLinesStore(record, stored=len(done), on_row=kept, noun="judging games",
                           describe=lambda job: f"judging game {job[0]} against {opponent}")
    run_jobs(jobs, _indexed_match, store, executor, max_in_flight=None)
    results = [done[i] for i in range(len(seeds))]  # in seed order, however they ended
    wins = np.array([1.0 if r["winner"] == 0 else 0.5 if r["winner"] is None else 0.0
                     for r in results])
    p = float(wins.mean())
    # Wilson's 95% interval (a draw counts half, so the count is rounded)
    ci = binomtest(int(round(wins.sum())), len(wins)).proportion_ci(0.95, method="wilson")
    return {"win_pct": 100 * p, "win_se": 100 * math.sqrt(p * (1 - p) / len(wins)),
            "win_low": 100 * ci.low, "win_high": 100 * ci.high,
            "margin": float(np.mean([r["margin"] for r in results]))}


def _finish_stage(checkpoint, spec, out, generation, row, curve, started, executor, log, *,
                  previous: Path | None = None) -> None:
    name = stage_name(generation)
    pending = out / f".{name}.judged.pt"
    save(checkpoint, pending)
    record = out / f"{name}-judging.jsonl"
    against = _judge(spec, pending, spec.eval_opponent, executor, eval_seeds(spec), log, record)
    row.update({f"vs_builtin_{k}": v for k, v in against.items()})
    if previous is not None:
        prior = _judge(spec, pending, f"net:{previous}", executor, previous_seeds(spec), log,
                       record)
        row.update({f"vs_previous_{k}": v for k, v in prior.items()})
    row["seconds"] = time.perf_counter() - started
    curve[:] = [r for r in curve if int(r["generation"]) != generation] + [row]
    curve.sort(key=lambda r: int(r["generation"]))
    write_csv_rows(out / CURVE_CSV, curve)
    write_curve_png(out / CURVE_PNG, curve, spec)
    pending.replace(out / f"{name}.pt")
    write_atomic(out / LATEST, (out / f"{name}.pt").read_bytes())
    vs = row.get("vs_builtin_win_pct")
    log(f"{name}: {row['stage']}" + (f", {vs:.0f}% wins against {spec.eval_opponent} "
                                     f"({row['vs_builtin_win_se']:.0f})" if vs is not None
                                     else "")
        + (f", {row['vs_previous_win_pct']:.0f}% against the previous generation"
           if "vs_previous_win_pct" in row else ""))


def _read_curve(path: Path) -> list[dict]:
    if not path.exists():
        return []
    import pandas as pd

    try:
        return pd.read_csv(path).to_dict("records")
    except (ValueError, OSError) as err:
        raise UserInputError(f"{path}: not a learning curve ({err}); delete it to rebuild "
                             "it") from None


def write_curve_png(path: Path, curve: list[dict], spec: TrainSpec) -> None:
    """Win % against the judging opponent (with standard errors) and held-out policy loss,
    by generation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    gens = [int(r["generation"]) for r in curve]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.6))
    wins = np.array([r.get("vs_builtin_win_pct", math.nan) for r in curve], float)
    # Wilson's interval where the row has it (rows of older runs: +- one standard error)
    low = np.array([r.get("vs_builtin_win_low", math.nan) for r in curve], float)
    high = np.array([r.get("vs_builtin_win_high", math.nan) for r in curve], float)
    ses = np.array([r.get("vs_builtin_win_se", math.nan) for r in curve], float)
    low, high = np.where(np.isnan(low), wins - ses, low), np.where(np.isnan(high), wins + ses,
                                                                     high)
    ax.errorbar(gens, wins, yerr=[wins - low, high - wins], marker="o", capsize=3,
                label=f"against {spec.eval_opponent} (95% interval)")
    prev = [r.get("vs_previous_win_pct", math.nan) for r in curve]
    ax.plot(gens, prev, marker="s", ls="--",
            label=f"against the previous generation ({len(previous_seeds(spec))} games)")
    ax.axhline(50, color="grey", lw=0.6)
    ax.set_ylim(0, 100)
    ax.set_xlabel("generation (0: behaviour cloning)")
    ax.set_ylabel("win %")
    ax.set_title(f"{spec.eval_games} games, {spec.max_turns} turns, {spec.rollouts} roll-outs",
                 fontsize=9)
    ax.legend(fontsize=7)
    bx.plot(gens, [r.get("valid_policy", math.nan) for r in curve], marker="o",
            label="policy (held out)")
    bx.plot(gens, [r.get("valid_value", math.nan) for r in curve], marker="o",
            label="value (held out)")
    bx.set_xlabel("generation")
    bx.set_ylabel("loss")
    bx.legend(fontsize=7)
    for axis in (ax, bx):
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    with atomic_output(path, binary=True) as fh:
        fig.savefig(fh, format="png", dpi=100)
    plt.close(fig)
