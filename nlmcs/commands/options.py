"""What the command modules share: subcommands with examples, and the common option groups.

Options are checked here, at the CLI edge, and turned into the typed configs of the library
(`SearchConfig`, `ModelConfig`, `CorpusOptions`); a bad value is one `UserInputError` line.
Nothing heavy is imported at module level, so `nlmcs --help` stays fast.
"""

from __future__ import annotations

import argparse
import math

from nlmcs.errors import UserInputError


def add_command(sub, name: str, *, help: str, example: str, func) -> argparse.ArgumentParser:
    """Add a subcommand whose --help ends with a worked example."""
    parser = sub.add_parser(
        name,
        help=help,
        description=help[:1].upper() + help[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=func)
    return parser


def add_group(sub, name: str, *, help: str, example: str, dest: str):
    """A command with sub-actions (`nlmcs manual ingest`, ...); alone it prints its usage."""
    parser = add_command(sub, name, help=help, example=example, func=None)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
    return parser.add_subparsers(dest=dest, metavar="ACTION")


def positive(name: str, value: int) -> int:
    if value < 1:
        raise UserInputError(f"--{name} must be at least 1, got {value}")
    return value


def finite(name: str, value: float, *, low: float | None = None) -> float:
    if not math.isfinite(value) or (low is not None and value < low):
        bound = f" and at least {low:g}" if low is not None else ""
        raise UserInputError(f"--{name} must be a finite number{bound}, got {value}")
    return value


def csv_ints(text: str, what: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as err:
        raise UserInputError(f"--{what} must be comma-separated integers, got {text!r}") from err
    if not out or min(out) < 1:
        raise UserInputError(f"--{what} needs positive integers, got {text!r}")
    return out


def csv_names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


# --- games --------------------------------------------------------------------------------------
def add_game_options(p) -> None:
    p.add_argument("--game", default="civ", help="game name")
    p.add_argument("--map", default="default", help="map preset: default (40x25), small, tiny")
    p.add_argument("--max-turns", type=int, default=None, help="game turn limit (default: game's)")


def make_game(args):
    from nlmcs.games import make_game as by_name

    kwargs = {"preset": args.map} if args.game == "civ" else {}
    if args.max_turns is not None:
        kwargs["max_turns"] = positive("max-turns", args.max_turns)
    return by_name(args.game, **kwargs)


# --- search, model and corpus options -----------------------------------------------------------
def add_search_options(p) -> None:
    g = p.add_argument_group("search")
    g.add_argument("--rollouts", type=int, default=500, help="roll-outs per real step")
    g.add_argument("--depth", type=int, default=20, help="simulated steps per roll-out")
    g.add_argument("--workers", type=int, default=1, help="roll-out worker processes")
    g.add_argument("--batch", type=int, default=10, help="roll-outs per weight snapshot")
    g.add_argument("--learn-steps", type=int, default=4, help="steps of a roll-out that train")
    g.add_argument("--real-move", choices=("best-rollout", "mean-q"), default="best-rollout")
    g.add_argument("--early-q", choices=("sampled", "expected"), default="expected")
    g.add_argument("--late-q", choices=("sampled", "expected"), default="expected")
    g.add_argument("--reward", choices=("ratio", "weighted"), default="ratio")
    g.add_argument("--rollout", choices=("uniform", "typed"), default="uniform")
    m = p.add_argument_group("model")
    m.add_argument("--alpha", type=float, default=1e-4, help="learning rate of every layer")
    m.add_argument("--l2", type=float, default=0.01, help="L2 penalty")
    m.add_argument("--passes", type=int, default=7, help="update passes per roll-out")
    m.add_argument("--hidden-update", choices=("release", "consistent", "error"),
                   default="release", help="factor of the hidden layers' update (see README)")
    m.add_argument("--hidden", choices=("sample", "expect"), default="sample")
    m.add_argument("--hidden-alpha", type=float, default=None,
                   help="learning rate of u and v (default: --alpha)")
    m.add_argument("--hidden-l2", type=float, default=None, help="L2 of u and v (default: --l2)")
    m.add_argument("--persist", choices=("none", "hidden"), default="none",
                   help="hidden: u, v and the text output weights carry over between steps")
    m.add_argument("--center", action="store_true",
                   help="output layer learns the reward minus the step's mean reward")
    m.add_argument("--normalize", action="store_true",
                   help="word features divided by their sentence's word count")
    m.add_argument("--overlap-state", action="store_true",
                   help="relevance feature: sentence words naming the agent's state")
    m.add_argument("--prior-overlap", type=float, default=0.0,
                   help="starting weight of the overlap relevance features")
    m.add_argument("--prior-match", type=float, default=0.0,
                   help="starting weight of the grounding (match) output features")
    m.add_argument("--table-bits", type=int, default=18, help="log2 of each weight table size")
    m.add_argument("--max-sentences", type=int, default=None, help="candidate sentence cap")
    m.add_argument("--rank-sentences", choices=("document", "state", "state-action"),
                   default="document", help="which sentences the cap keeps: first in the "
                   "document, or those sharing most words with the state (and action) labels")


def configs(args):
    """(SearchConfig, ModelConfig) from the options of `add_search_options`."""
    from nlmcs.model.config import ModelConfig
    from nlmcs.search.config import SearchConfig

    for name in ("rollouts", "depth", "workers", "batch", "passes"):
        positive(name, getattr(args, name))
    if args.learn_steps < 0:
        raise UserInputError(f"--learn-steps must be at least 0, got {args.learn_steps}")
    if not 8 <= args.table_bits <= 26:
        raise UserInputError("--table-bits must be between 8 and 26")
    if args.max_sentences is not None:
        positive("max-sentences", args.max_sentences)
    scfg = SearchConfig(
        rollouts=args.rollouts, depth=args.depth, workers=args.workers, batch=args.batch,
        learn_steps=args.learn_steps, real_move=args.real_move, early_q=args.early_q,
        late_q=args.late_q, reward=args.reward, rollout=args.rollout,
    )  # fmt: skip
    for name in ("hidden_alpha", "hidden_l2"):
        if getattr(args, name) is not None:
            finite(name.replace("_", "-"), getattr(args, name), low=0.0)
    mcfg = ModelConfig(
        alpha=finite("alpha", args.alpha, low=0.0), l2=finite("l2", args.l2, low=0.0),
        passes=args.passes, hidden_update=args.hidden_update, hidden=args.hidden,
        hidden_alpha=args.hidden_alpha, hidden_l2=args.hidden_l2, persist=args.persist,
        center=args.center, normalize=args.normalize, overlap_state=args.overlap_state,
        prior_overlap=finite("prior-overlap", args.prior_overlap),
        prior_match=finite("prior-match", args.prior_match),
        table_bits=args.table_bits, max_sentences=args.max_sentences,
        rank_sentences=args.rank_sentences,
    )  # fmt: skip
    return scfg, mcfg


def add_corpus_options(p) -> None:
    g = p.add_argument_group("corpus (uct-corpus, flat-ucb-corpus)")
    g.add_argument("--corpus", default=None, help="stored corpus name or directory "
                   "(default: civ-builtin)")
    g.add_argument("--prior", choices=("similarity", "naive-bayes"), default="similarity",
                   help="corpus prior: similarity (Dobre & Lascarides) or naive-Bayes (Ontañón)")
    g.add_argument("--utility", choices=("one", "result"), default="one",
                   help="similarity prior's utility: 1, or the recorded player's result")


def corpus_options(args):
    from nlmcs.search.methods import CorpusOptions

    return CorpusOptions(corpus=args.corpus, prior=args.prior, utility=args.utility)
