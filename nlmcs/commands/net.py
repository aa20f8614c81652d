"""`nlmcs net train|show` and `nlmcs bench net`: the policy/value network of the AlphaZero line.

`train` clones a corpus's moves, then runs self-play generations (resumable; workers locally or
on a Dask cluster); `show` prints what a checkpoint is for and how it was trained; the bench
measures batched inference on the CPU and, when there is one, the GPU.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from nlmcs.commands.options import (
    COUNT,
    GAMES,
    add_command,
    add_config_option,
    add_fields,
    add_group,
    merged,
    section,
)

TRAIN_EXAMPLE = "nlmcs net train --workers 2 --out runs/net"


def register(sub) -> None:
    from nlmcs.net.spec import TrainSpec

    actions = add_group(sub, "net", help="the policy/value network: train it on a corpus and "
                        "by self-play, show a checkpoint",
                        example=TRAIN_EXAMPLE, dest="net_action")  # fmt: skip
    t = add_command(actions, "train", func=_train_cli, example=TRAIN_EXAMPLE,
                    help="behaviour cloning on a corpus, then self-play generations judged "
                         "against the built-in AI (resumable); writes gen-NNN.pt, net.pt, "
                         "curve.csv and curve.png")
    t.add_argument("--out", type=Path, required=True, help="training folder")
    t.add_argument("--device", default="cpu", help="where the fit runs: cpu or cuda "
                   "(self-play always searches on the CPU)")
    from nlmcs.commands.ablation import add_executor_options

    x = add_executor_options(t)
    x.add_argument("--workers", type=COUNT, help="local game processes (default: usable CPUs)")
    add_fields(t, section(t, "train", "training (`TrainSpec`)"), "train", TrainSpec)
    add_config_option(t)

    s = add_command(actions, "show", func=_show_cli,
                    example="nlmcs net show results/net/civ-small/net.pt",
                    help="what a checkpoint was trained for and how (JSON)")
    s.add_argument("checkpoint", type=Path, help="network checkpoint (.pt)")



def register_bench(bench_sub) -> None:
    b = add_command(bench_sub, "net", func=_bench_cli,
                    example="nlmcs bench net --devices cpu,cuda --batches 1,64",
                    help="decisions per second of batched inference, per device")
    b.add_argument("--net", type=Path, help="checkpoint (default: the shipped one)")
    b.add_argument("--devices", default="cpu", help="comma-separated: cpu, cuda (a device "
                   "that is not there is skipped with a note)")
    b.add_argument("--batches", default="1,16,128", help="positions per forward pass")
    b.add_argument("--games", type=GAMES, default=4, help="built-in AI games whose positions "
                   "are timed (default: 4)")
    b.add_argument("--csv", type=Path, help="also write the rows to this CSV")


def _game(spec):
    from nlmcs.games import make_game

    return make_game(spec.game, **spec.game_options())


def _train_cli(args) -> int:
    from nlmcs.commands.ablation import game_executor
    from nlmcs.errors import UserInputError
    from nlmcs.net.spec import TrainSpec
    from nlmcs.net.train import train_net

    spec = merged(args, "train", TrainSpec())
    if args.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UserInputError(f"--device {args.device}: torch sees no CUDA device here")
    elif args.device != "cpu":
        raise UserInputError(f"--device {args.device!r}: use cpu or cuda")
    game = _game(spec)  # a bad game, map or player is refused before anything runs
    game.policy(spec.eval_opponent)
    if spec.opponent != "self":
        game.policy(spec.opponent)
    if spec.corpus and (spec.bc_epochs or spec.corpus_mix):
        from corpus.bundle import check_compatible
        from corpus.shipped import find_corpus_dir
        from corpus.store import load_corpus

        check_compatible(load_corpus(find_corpus_dir(spec.corpus)), game)
    jobs = max(spec.games, spec.eval_games, 1)
    with game_executor(args, jobs) as (executor, _, where):
        print(f"training in {args.out}, games {where}", file=sys.stderr)
        curve = train_net(spec, args.out, executor=executor, device=args.device,
                          log=lambda line: print(line, file=sys.stderr, flush=True))
    last = curve[-1]
    print(json.dumps({k: last[k] for k in last if k.startswith(("generation", "vs_"))}))
    return 0


def _show_cli(args) -> int:
    from nlmcs.net.checkpoint import load

    ck = load(args.checkpoint)
    params = sum(p.numel() for p in ck.net.parameters())
    print(json.dumps({"game": ck.layout.game, "ruleset": ck.layout.ruleset,
                      "state_features": len(ck.layout.state_features),
                      "tokens": len(ck.layout.tokens), "config": ck.net.config.to_dict(),
                      "parameters": params, "training": ck.training}, indent=1))
    return 0


def _bench_cli(args) -> int:
    import torch

    from nlmcs.errors import UserInputError
    from nlmcs.files import write_csv_rows
    from nlmcs.games import make_game
    from nlmcs.net.bench import bench_inference
    from nlmcs.net.checkpoint import load
    from nlmcs.net.guide import default_net

    game = make_game("civ", preset="small", max_turns=20)
    ck = load(args.net or default_net(game.name), game)
    devices = []
    for d in (x.strip() for x in args.devices.split(",") if x.strip()):
        if d.startswith("cuda") and not torch.cuda.is_available():
            print(f"note: {d} skipped: torch sees no CUDA device here", file=sys.stderr)
        elif d == "cpu" or d.startswith("cuda"):
            devices.append(d)
        else:
            raise UserInputError(f"--devices: unknown device {d!r} (cpu, cuda)")
    try:
        batches = [int(x) for x in args.batches.split(",") if x.strip()]
    except ValueError:
        raise UserInputError(f"--batches {args.batches!r}: give positive integers") from None
    if not batches or min(batches) < 1 or not devices:
        raise UserInputError("--batches and --devices need at least one positive entry each")
    rows = bench_inference(ck, game, devices=devices, batches=batches, games=args.games)
    print(f"{'device':<24} {'batch':>5} {'positions/s':>12} {'decisions/s':>12} "
          f"{'max |p - p_cpu|':>16}")
    for r in rows:
        diff = "" if r["max_diff_vs_cpu"] is None else f"{r['max_diff_vs_cpu']:.1e}"
        print(f"{r['device']:<24} {r['batch']:>5} {r['positions_per_s']:>12,.0f} "
              f"{r['decisions_per_s']:>12,.0f} {diff:>16}")
    if args.csv:
        write_csv_rows(args.csv, rows)
    return 0
