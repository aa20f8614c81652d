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


def int_option(*, low: int | None = None, high: int | None = None):
    """An argparse `type=` for an integer in [low, high]; a bad value is a one-line usage error
    naming the option (argparse adds "argument --name:")."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {_range(low, high)}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def float_option(*, low: float | None = None, high: float | None = None,
                 above: float | None = None):
    """An argparse `type=` for a finite number in [low, high] (or above `above`, exclusive)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        bad = (not math.isfinite(value) or (low is not None and value < low)
               or (high is not None and value > high) or (above is not None and value <= above))
        if bad:
            what = f"greater than {above:g}" if above is not None else _range(low, high)
            raise argparse.ArgumentTypeError(f"must be a finite number {what}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def _range(low, high) -> str:
    def show(x) -> str:
        return f"{x:g}" if isinstance(x, float) else str(x)

    if low is not None and high is not None:
        return f"between {show(low)} and {show(high)}"
    if low is not None:
        return f"at least {show(low)}"
    return f"at most {show(high)}" if high is not None else "any value"


SEED = int_option(low=0, high=2**32 - 1)
"""Seeds are non-negative (numpy's SeedSequence refuses negative ones) and fit 32 bits, so that
seed + i of every game of a run fits the 64-bit columns of stores and results."""
COUNT = int_option(low=1)
"""Counts of games, steps, roll-outs, workers, results shown: at least 1."""


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
    from nlmcs.games import game_entries

    entries = game_entries()
    games = "; ".join(f"{e.name}: {e.summary}" for e in entries)
    maps = "; ".join(f"{e.name}: {e.map_help}" for e in entries if e.maps)
    p.add_argument("--game", default="civ", choices=[e.name for e in entries], metavar="GAME",
                   help=f"game ({games})")
    p.add_argument("--map", default="default", help=f"map preset ({maps})")
    p.add_argument("--max-turns", type=COUNT, default=None,
                   help="game turn limit (default: game's)")


def make_game(args):
    from nlmcs.games import game_entry
    from nlmcs.games import make_game as by_name

    options = game_entry(args.game).options(map_preset=args.map, max_turns=args.max_turns)
    return by_name(args.game, **options)


def simulated_game(args):
    """`make_game` for the commands that play the game in this process (`play`, `bench
    search`, `bench step`, `relevance accuracy`): a FreeCiv match runs on a server and is
    played by `nlmcs freeciv play` and `nlmcs ablation run --game freeciv`."""
    from nlmcs.games import game_entry, simulated_games

    if not game_entry(args.game).simulated:
        here = ", ".join(e.name for e in simulated_games())
        raise UserInputError(f"--game {args.game}: this command plays a simulated game "
                             f"({here}); a {args.game} game is played on a server with `nlmcs "
                             f"freeciv play` or `nlmcs ablation run --game {args.game}`")
    return make_game(args)


# --- search, model and corpus options -----------------------------------------------------------
SEARCH_OPTIONS = ("rollouts", "depth", "workers", "batch", "learn_steps", "real_move", "early_q",
                  "late_q", "reward", "rollout", "prior_mode", "puct_c", "prior_visits",
                  "prior_floor", "prior_weight")
MODEL_OPTIONS = ("alpha", "l2", "passes", "hidden_update", "hidden", "hidden_alpha", "hidden_l2",
                 "persist", "center", "normalize", "overlap_state", "prior_overlap", "prior_match",
                 "advice", "prior_advice", "table_bits", "max_sentences", "rank_sentences",
                 "grounding_features", "game_features")


def add_search_options(p) -> None:
    """Search and model options; each left out keeps the value of the chosen base: the project's
    defaults (`SearchConfig()`, `ModelConfig()`), or with --release the 2011 release's."""
    g = p.add_argument_group("search (defaults: `SearchConfig`; see README)")
    g.add_argument("--release", action="store_true",
                   help="start from the 2011 release's settings instead of the defaults")
    g.add_argument("--rollouts", type=int, help="roll-outs per real step (500)")
    g.add_argument("--depth", type=int, help="simulated steps per roll-out (20)")
    g.add_argument("--workers", type=int, help="roll-out worker processes (1)")
    g.add_argument("--batch", type=int, help="roll-outs per weight snapshot")
    g.add_argument("--learn-steps", type=int, help="steps of a roll-out that train (4)")
    g.add_argument("--real-move", choices=("best-rollout", "mean-q"))
    g.add_argument("--early-q", choices=("sampled", "expected"))
    g.add_argument("--late-q", choices=("sampled", "expected"))
    g.add_argument("--reward", choices=("ratio", "weighted"))
    g.add_argument("--rollout", choices=("uniform", "typed"))
    m = p.add_argument_group("model (defaults: `ModelConfig`; see README)")
    m.add_argument("--alpha", type=float, help="learning rate of the output layer")
    m.add_argument("--l2", type=float, help="L2 penalty")
    m.add_argument("--passes", type=int, help="update passes per roll-out (7)")
    m.add_argument("--hidden-update", choices=("release", "consistent", "error", "expected"),
                   help="factor of the hidden layers' update")
    m.add_argument("--hidden", choices=("sample", "expect"))
    m.add_argument("--hidden-alpha", type=float, help="learning rate of u and v")
    m.add_argument("--hidden-l2", type=float, help="L2 of u and v")
    m.add_argument("--persist", choices=("none", "hidden"),
                   help="hidden: u, v and the text output weights carry over between steps")
    flag = argparse.BooleanOptionalAction
    m.add_argument("--center", action=flag,
                   help="output layer learns the reward minus the step's mean reward")
    m.add_argument("--normalize", action=flag,
                   help="word features divided by their sentence's word count")
    m.add_argument("--overlap-state", action=flag,
                   help="relevance feature: sentence words naming the agent's state")
    m.add_argument("--grounding-features", action=flag,
                   help="output features: labelled words naming the action / the state")
    m.add_argument("--game-features", action=flag,
                   help="output features action x agent x state labels in the text kinds "
                        "(linear and nonlinear always have them)")
    m.add_argument("--prior-overlap", type=float,
                   help="starting weight of the overlap relevance features")
    m.add_argument("--prior-match", type=float,
                   help="starting weight of the grounding (match) output features")
    m.add_argument("--advice", action=flag,
                   help="output feature: the sentence names both the action and the state")
    m.add_argument("--prior-advice", type=float,
                   help="starting weight of the advice feature (with --advice)")
    m.add_argument("--table-bits", type=int, help="log2 of each weight table size (18)")
    m.add_argument("--max-sentences", type=int, help="candidate sentence cap")
    m.add_argument("--rank-sentences", choices=("document", "state", "state-action"),
                   help="which sentences the cap keeps: first in the document, or those "
                        "sharing most words with the state (and action) labels")  # fmt: skip


def configs(args):
    """(SearchConfig, ModelConfig): the base (defaults, or the release with --release) with the
    options given, checked."""
    from dataclasses import replace

    from nlmcs.model.config import ModelConfig
    from nlmcs.search.config import SearchConfig

    release = getattr(args, "release", False)
    base_s = SearchConfig.release() if release else SearchConfig()
    base_m = ModelConfig.release() if release else ModelConfig()
    scfg = replace(base_s, **_given(args, SEARCH_OPTIONS))
    mcfg = replace(base_m, **_given(args, MODEL_OPTIONS))
    for name in ("rollouts", "depth", "workers", "batch"):
        positive(name.replace("_", "-"), getattr(scfg, name))
    positive("passes", mcfg.passes)
    if scfg.learn_steps < 0:
        raise UserInputError(f"--learn-steps must be at least 0, got {scfg.learn_steps}")
    if not 8 <= mcfg.table_bits <= 26:
        raise UserInputError("--table-bits must be between 8 and 26")
    if mcfg.max_sentences is not None:
        positive("max-sentences", mcfg.max_sentences)
    for name in ("alpha", "l2", "hidden_alpha", "hidden_l2"):
        if getattr(mcfg, name) is not None:
            finite(name.replace("_", "-"), getattr(mcfg, name), low=0.0)
    for name in ("prior_overlap", "prior_match", "prior_advice"):
        finite(name.replace("_", "-"), getattr(mcfg, name))
    if mcfg.prior_advice and not mcfg.advice:
        raise UserInputError("--prior-advice needs --advice (the feature it starts)")
    for name in ("puct_c", "prior_weight"):
        finite(name.replace("_", "-"), getattr(scfg, name), low=0.0)
    if not 0.0 <= scfg.prior_floor <= 1.0:
        raise UserInputError(f"--prior-floor must be in [0, 1], got {scfg.prior_floor}")
    if scfg.prior_visits < 0:
        raise UserInputError(f"--prior-visits must be at least 0, got {scfg.prior_visits}")
    _check_bounds(mcfg)
    return scfg, mcfg


MODEL_BOUNDS = {"alpha": 1.0, "hidden_alpha": 1.0, "l2": 1.0, "hidden_l2": 1.0,
                "prior_overlap": 100.0, "prior_match": 100.0, "prior_advice": 100.0}
"""Largest magnitude of each real-valued model option: beyond them the weights overflow within
a few updates and every Q value becomes NaN (the defaults are 1e-4, 0.01 and 0)."""


def _check_bounds(mcfg) -> None:
    for name, bound in MODEL_BOUNDS.items():
        value = getattr(mcfg, name)
        if value is not None and abs(value) > bound:
            raise UserInputError(f"--{name.replace('_', '-')} must be at most {bound:g} in "
                                 f"magnitude, got {value}")


def _given(args, names: tuple[str, ...]) -> dict:
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def add_corpus_options(p) -> None:
    g = p.add_argument_group("corpus (uct-corpus, flat-ucb-corpus, text-corpus)")
    g.add_argument("--corpus", default=None, help="stored corpus name or directory "
                   "(default: civ-sample, which ships with nlmcs)")
    g.add_argument("--prior", choices=("similarity", "naive-bayes"), default="similarity",
                   help="corpus prior: similarity (Dobre & Lascarides) or naive-Bayes (Ontañón)")
    g.add_argument("--utility", choices=("one", "result"), default="one",
                   help="similarity prior's utility: 1, or the recorded player's result")
    g.add_argument("--prior-mode", choices=("puct", "visits"),
                   help="puct (default): the prior is a policy for PUCT selection; visits: the "
                        "paper's formula, --prior-visits virtual visits at the prior's value")
    g.add_argument("--puct-c", type=float, help="PUCT exploration constant (0.3)")
    g.add_argument("--prior-visits", type=int, help="virtual visits in visits mode (10)")
    g.add_argument("--prior-floor", type=float,
                   help="share of the policy prior spread uniformly over all actions (0.1)")
    g.add_argument("--prior-weight", type=float,
                   help="text-corpus: weight of the corpus policy added to Q at the root (0.1)")


def corpus_options(args):
    from nlmcs.search.methods import CorpusOptions

    return CorpusOptions(corpus=args.corpus, prior=args.prior, utility=args.utility)
