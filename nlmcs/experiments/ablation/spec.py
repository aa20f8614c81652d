"""What an ablation plays: methods x roll-out budgets x paired game seeds, as one typed spec.

An *arm* is a method at one roll-out budget ("text", or "text@200" when several budgets are
compared). Every arm plays game i from the same seed, derived from the run's seed S and i, so
results are paired game by game (Branavan et al. 2011 compare methods on shared games too).
The spec's *identity* (everything that changes what a game means: the game and its options, step
count, search, model and corpus settings, opponent, S, manual name and twin seed, project
version) is
fingerprinted; a run
folder holds games of one identity, while more games, methods or budgets may be added later.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from nlmcs import __version__
from nlmcs.errors import UserInputError
from nlmcs.fields import MAX_GAMES, MAX_SEED, check_fields, option
from nlmcs.methods import (
    CorpusOptions,
    NetOptions,
    ReaderOptions,
    get_method,
    rollout_opponent,
)
from nlmcs.model.config import ModelConfig, identity_dict
from nlmcs.runs import fingerprint, identity_changes  # noqa: F401  (the ablation's names)
from nlmcs.search.config import SearchConfig
from nlmcs.search.config import identity_dict as search_identity

SPEC_FORMAT = "nlmcs-ablation/1"

DEFAULT_METHODS = ("text", "random-text", "nonlinear", "linear", "uct")
"""The comparison of Branavan et al. (2011), Table 2 (relevance-only aside)."""


@dataclass(frozen=True)
class Preset:
    """Settings a `--preset` fills in where the user gave no option of their own."""

    map: str
    steps: int
    rollouts: tuple[int, ...]
    depth: int
    games: int
    max_turns: int | None = None
    """With a turn limit, games are played to it (full games), so each ends decided by score."""
    methods: tuple[str, ...] | None = None
    """None: `DEFAULT_METHODS`."""
    help: str = ""
    findings: str = ""
    """Where the pre-registered blocks that asked this preset's question are reported, and what
    they found: printed after a run's own verdict, which at a preset's small size may say
    little."""


READING_FINDINGS = (
    "The pre-registered 100-pair blocks at these settings found text level with its "
    "word-permuted twin at 50 and 100 turns (100 turns: +0.7 points, p = 0.96), with the "
    "shipped guide and with FreeCiv's help text (docs/reading.md, 'The controls at 50 and 100 "
    "turns'); the Civilization II manual's blocks are in docs/paper-manual.md.")
PRIOR_FINDINGS = (
    "The pre-registered blocks found the trained text prior ahead of its twin's but behind "
    "plain UCT (docs/prior.md, 'Block F1').")

READING_METHODS = ("text", "random-text", "nonlinear")
"""The reading question: does the text beat its word salad, and the same network without text?"""
PRIOR_METHODS = ("uct-text", "uct-random-text", "uct")
"""The text prior's question: does the reader's prior steer UCT better than its twin's, and
better than no prior?"""

PRESETS: dict[str, Preset] = {
    # Full 12-turn games on the small map: every game ends at the turn limit with the higher
    # score winning, as the paper preset's 100-step games end at the default 100-turn limit.
    # Measured on two shared cores: about 3 minutes for the five default methods (the two text
    # methods take ~85% of it: ~0.4 s per step at 10 x 5 on the small map).
    "quick": Preset(map="small", steps=12, rollouts=(10,), depth=5, games=20, max_turns=12,
                    help="small map, full 12-turn games, 10 x 5 roll-outs, 20 games of the five "
                         "default methods (minutes)"),
    # The release setting of Branavan et al.: 1,000-tile map, 100 steps, 500 roll-outs x 20.
    "paper": Preset(map="default", steps=100, rollouts=(500,), depth=20, games=200,
                    help="40x25 map, 100 steps, 500 x 20, 200 games (the default settings)"),
    # The horizon where the guide's advice is worth enough to be read (docs/reading.md: the
    # advice audit and the controls at 50 and 100 turns chose it).
    "reading": Preset(map="small", steps=100, rollouts=(30,), depth=5, games=100, max_turns=100,
                      methods=READING_METHODS,
                      help="small map, full 100-turn games, 30 x 5, 100 games of text, "
                           "random-text and nonlinear (about an hour on two cores)",
                      findings=READING_FINDINGS),
    # The same question in a few minutes: what `make demo` runs.
    # The text reader's prior in UCT at the reading horizon (docs/prior.md).
    "prior": Preset(map="small", steps=100, rollouts=(30,), depth=5, games=200, max_turns=100,
                    methods=PRIOR_METHODS,
                    help="small map, full 100-turn games, 30 x 5, 200 games of uct-text, "
                         "uct-random-text and uct (about 30 minutes on two cores)",
                    findings=PRIOR_FINDINGS),
    "reading-quick": Preset(map="small", steps=100, rollouts=(10,), depth=5, games=8,
                            max_turns=100, methods=READING_METHODS,
                            help="the reading preset at 10 x 5 roll-outs and 8 games (minutes)",
                            findings=READING_FINDINGS),
}
DEFAULT_PRESET = "paper"
"""What an option left out means when no preset is named."""


def get_preset(name: str | None) -> Preset:
    key = name or DEFAULT_PRESET
    if key not in PRESETS:
        raise UserInputError(f"unknown preset {key!r}; choose from {', '.join(PRESETS)}")
    return PRESETS[key]


@dataclass(frozen=True)
class Arm:
    """One column of the results table: a method at one roll-out budget."""

    label: str
    method: str
    rollouts: int


@dataclass(frozen=True)
class AblationSpec:
    """Everything an ablation run plays; saved in the run folder and with every game."""

    methods: tuple[str, ...]
    """Search methods (`nlmcs.methods.METHODS`), in table order."""
    rollouts: tuple[int, ...] = option(low=1)
    """Roll-out budgets; each method plays at each (arms "method@rollouts" when several)."""
    games: int = option(low=1, high=MAX_GAMES)
    """Paired games per arm."""
    seed: int = option(low=0, high=MAX_SEED)
    """S: game i of every arm is played from `game_seed(S, i)`."""
    steps: int = option(low=1)
    """Real steps per game (the papers' 100-step games); a full game plays to the turn limit."""
    opponent: str = "builtin"
    """The scripted opponent (player 1), also modelled inside roll-outs."""
    game: str = "civ"
    """The game (`nlmcs.games.make_game`)."""
    game_options: Mapping[str, object] = option(default_factory=dict)
    """Keyword options of `nlmcs.games.make_game` (civ: preset, max_turns)."""
    full_games: bool = False
    """Play to the game's own end (its turn limit) rather than a step limit."""
    manual: str = "civ-guide"
    """Stored manual read by text methods (random-text reads a word-permuted twin of it)."""
    twin_seed: int | None = option(None, low=0, high=MAX_SEED)
    """random-text's twin: None, a twin per game, shuffled with the game's own seed (so the
    control is as many draws of word salad as there are games); N, one twin of seed N
    (`NAME-random-N`) for every game."""
    search: SearchConfig = field(default_factory=SearchConfig)
    """Search template; each arm sets its own roll-out budget, and games use one process each."""
    model: ModelConfig = field(default_factory=ModelConfig)
    """Model template; each MC method sets the network kind."""
    corpus: CorpusOptions = field(default_factory=CorpusOptions)
    """Corpus use of the corpus methods (ignored by the others)."""
    reader: ReaderOptions = field(default_factory=ReaderOptions)
    """Trained readers of the text-prior methods (ignored by the others)."""
    net: NetOptions = field(default_factory=NetOptions)
    """The policy/value network of the network methods (ignored by the others)."""

    def __post_init__(self) -> None:
        check_fields(self, "ablation option")
        if not self.methods:
            raise UserInputError("--methods needs at least one method")
        for name in self.methods:
            get_method(name)
        if len(set(self.methods)) != len(self.methods):
            raise UserInputError(f"--methods names a method twice: {','.join(self.methods)}")
        if not self.rollouts:
            raise UserInputError("--rollouts needs positive roll-out budgets")
        if len(set(self.rollouts)) != len(self.rollouts):
            raise UserInputError("--rollouts names a budget twice")
        if not self.variant and any(get_method(m).reads == "mismatched" for m in self.methods):
            raise UserInputError("text-mismatched reads another game's rule: it needs a "
                                 "variant game (--variant)")

    @property
    def variant(self) -> str:
        """The game's rule variant ("" for none); in its game options, so in the identity."""
        return str(self.game_options.get("variant") or "")

    def arms(self) -> list[Arm]:
        several = len(self.rollouts) > 1
        return [Arm(f"{m}@{r}" if several else m, m, r) for m in self.methods
                for r in self.rollouts]  # fmt: skip

    def arm_search(self, arm: Arm) -> SearchConfig:
        """The search config one game of `arm` uses: its budget, one process (games are the
        unit of parallelism), no decision log."""
        return dataclasses.replace(self.search, rollouts=arm.rollouts, workers=1,
                                   opponent=rollout_opponent(self.opponent),
                                   log_decisions=False)  # fmt: skip

    def identity(self) -> dict:
        """What must match for games to belong in one run folder (not methods, budgets or the
        number of games: those may grow)."""
        search = search_identity(self.search)
        for key in ("rollouts", "workers", "log_decisions", "engine"):
            search.pop(key, None)
        ident = {
            "format": SPEC_FORMAT, "version": __version__, "seed": self.seed,
            "steps": self.steps, "full_games": self.full_games, "opponent": self.opponent,
            "game": self.game, "game_options": dict(self.game_options),
            "manual": self.manual, "twin_seed": self.twin_seed, "search": search,
            "model": identity_dict(self.model), "corpus": dataclasses.asdict(self.corpus),
        }  # fmt: skip
        if any(get_method(m).corpus for m in self.methods):
            ident["corpus_content"] = corpus_identity(self.corpus)
        if any(get_method(m).text_prior for m in self.methods) or self.reader != ReaderOptions():
            ident["reader"] = reader_identity(self.reader)
        if any(get_method(m).net for m in self.methods) or self.net != NetOptions():
            ident["net"] = net_identity(self.net, self.game, self.game_options)
        # Plain JSON values, so an identity read back from run.json compares equal.
        return json.loads(json.dumps(ident, default=str))

    def fingerprint(self) -> str:
        return fingerprint(self.identity())

    def to_dict(self) -> dict:
        return {**self.identity(), "methods": list(self.methods),
                "rollouts": list(self.rollouts), "games": self.games,
                "arms": [a.label for a in self.arms()]}  # fmt: skip


def corpus_identity(options: CorpusOptions) -> dict:
    """The corpus the corpus methods read, by its games and its files' content hashes: games a
    `corpus record` or `corpus ingest` adds make it another corpus, and so another run."""
    from corpus.bundle import recorded_corpus
    from corpus.meta import read_meta

    meta = read_meta(recorded_corpus(options.corpus))
    files = {name: entry.get("sha256") for name, entry in sorted((meta.get("files") or {}).items())}
    content = json.dumps({"parts": meta.get("parts"), "files": files}, sort_keys=True)
    return {"games": meta["counts"]["games"],
            "sha256": hashlib.sha256(content.encode()).hexdigest()[:16]}


def reader_identity(options: ReaderOptions) -> dict:
    """The reader files by path and content hash: a run folder's games were all played with
    the same weights."""
    from nlmcs.files import sha256_file
    from nlmcs.reader.weights import load_model

    out = {}
    for key in ("reader", "twin_reader"):
        path = getattr(options, key)
        if path is not None:
            load_model(path)  # a bad file is refused before any game
        out[key] = None if path is None else {"path": str(path),
                                              "sha256": sha256_file(path)[:16]}
    return out


def net_identity(options: NetOptions, game: str, game_options: Mapping[str, object]) -> dict:
    """The network file by path and content hash (the shipped one for the game's horizon when
    none is named), and its roll-out depth: a run folder's games were all played with the same
    network."""
    from nlmcs.files import sha256_file
    from nlmcs.games import make_game
    from nlmcs.net.checkpoint import load
    from nlmcs.net.guide import default_net, horizon, shipped_net

    path = options.net if options.net is not None else default_net(
        game, horizon(make_game(game, **game_options)))
    load(path)  # a bad file is refused before any game
    return {"net": "shipped" if shipped_net(path) else str(path),
            "sha256": sha256_file(path)[:16], "net_depth": options.net_depth,
            "value_weight": options.value_weight}

