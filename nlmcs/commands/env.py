"""`nlmcs env ppo`: does masked PPO learn on the Gymnasium environment? Thin over
`nlmcs.experiments.masked_ppo`."""

from __future__ import annotations

import argparse
import time

from nlmcs.commands.options import COUNT, SEED, add_command, add_group
from nlmcs.errors import UserInputError

EXAMPLE = "nlmcs env ppo --steps 16384 --train-seed 0 --eval-seeds 1000:1100"


def register(sub) -> None:
    actions = add_group(sub, "env", help="the RL environments: a masked-PPO training run",
                        example=EXAMPLE, dest="env_action")
    p = add_command(actions, "ppo", func=ppo_cli, example=EXAMPLE,
                    help="train MaskablePPO on nlmcs/Civ-v0 as gymnasium.make returns it, then "
                         "play it and the random masked policy on the same seeds and compare "
                         "them pair by pair")  # fmt: skip
    p.add_argument("--steps", type=COUNT, default=16_384, help="PPO's training steps (turns)")
    p.add_argument("--train-seed", type=SEED, default=0,
                   help="seed of PPO (torch, its sampling, the training games)")
    p.add_argument("--eval-seeds", type=seed_range, default="1000:1100",
                   help="evaluation game seeds A:B (A, ..., B-1), disjoint from training's")
    p.add_argument("--opponent", default="builtin:easy", help="the environment's player 1")
    p.add_argument("--max-turns", type=COUNT, default=30, help="turn limit of every game")


def register_bench(bench_sub) -> None:
    """No benchmark of its own."""


def seed_range(text: str) -> list[int]:
    """`A:B` (A, A+1, ..., B-1) as a list of seeds."""
    start, sep, stop = text.partition(":")
    try:
        seeds = list(range(int(start), int(stop))) if sep else []
    except ValueError:
        seeds = []
    if not seeds or seeds[0] < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seed range A:B with 0 <= A < B")
    return seeds


def ppo_cli(args: argparse.Namespace) -> int:
    from nlmcs.experiments.masked_ppo import ENV, make_env, pair, play, report, train

    seeds = args.eval_seeds if isinstance(args.eval_seeds, list) else seed_range(args.eval_seeds)
    env = {"opponent": args.opponent, "max_turns": args.max_turns}
    make_env(**env)  # an unknown opponent is one line before any training
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        raise UserInputError("nlmcs env ppo needs sb3_contrib: pip install 'nlmcs[rl]'") from None
    print(f"env {({**ENV, **env})}, steps {args.steps}, train seed {args.train_seed}, eval "
          f"seeds {seeds[0]}..{seeds[-1]}", flush=True)
    start = time.perf_counter()
    model = train(steps=args.steps, seed=args.train_seed, env=env)
    trained = time.perf_counter() - start
    ppo = [play(model, s, env=env) for s in seeds]
    rnd = [play(None, s, env=env) for s in seeds]
    print(f"trained in {trained:.0f} s, evaluated in {time.perf_counter() - start - trained:.0f} s")
    print(report(pair(ppo, rnd, seed=args.train_seed)))
    return 0
