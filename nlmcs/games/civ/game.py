"""`CivGame`: the fixed description of a civ game (ruleset, map size, players, turn limit).

It compiles the ruleset into lookup tables once, caches one generated map per seed (maps are
immutable and shared by every state made from them) and makes states and policies.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.fields import check_fields, option
from nlmcs.games.base import Game, Policy
from nlmcs.games.civ import features, serialize, variants
from nlmcs.games.civ.mapgen import MAX_SIDE, MIN_SIDE, MapData, generate_map, start_tiles
from nlmcs.games.civ.ruleset import load_ruleset
from nlmcs.games.civ.state import CivState
from nlmcs.games.civ.tables import compile_tables


@dataclass(frozen=True)
class CivConfig:
    """How a civ game is set up."""

    ruleset: str = "classic"
    """A ruleset name in data/rulesets/ ("classic") or a path to a JSON ruleset."""
    width: int = option(40, low=MIN_SIDE, high=MAX_SIDE)
    """Map width in tiles (40 x 25 = 1,000 tiles, the papers' map size)."""
    height: int = option(25, low=MIN_SIDE, high=MAX_SIDE)
    """Map height in tiles."""
    num_players: int = option(2, low=2, high=8)
    """Civilizations on the map (2 by default; more are allowed)."""
    max_turns: int = option(100, low=1)
    """The game ends after this many turns; the higher score then wins."""
    land_fraction: float = option(0.55, low=0.2, high=0.9)
    """Share of the map that is land."""
    wrap_x: bool = False
    """The map wraps east to west, as FreeCiv's maps (WRAPX) do."""
    variant: Literal["", "sacred-terrain", "sacred-terrain-end"] = ""
    """"" (the plain game) or a rule variant (`variants.VARIANTS`) whose rule, a sacred terrain
    drawn per seed, only the game's manual states."""

    def __post_init__(self) -> None:
        check_fields(self, "civ option")

    @classmethod
    def small(cls, **overrides) -> CivConfig:
        """A 16x12 map for tests and quick runs."""
        return cls(**{"width": 16, "height": 12, **overrides})

    @classmethod
    def preset(cls, name: str, **overrides) -> CivConfig:
        presets = {"default": {}, "small": {"width": 16, "height": 12},
                   "tiny": {"width": 10, "height": 8}}
        if name not in presets:
            raise UserInputError(f"unknown map preset {name!r} (known: {', '.join(presets)})")
        return cls(**{**presets[name], **overrides})

    def to_dict(self) -> dict:
        """The fields, without `variant` when there is none and `wrap_x` when the map does not
        wrap (so plain games record what they recorded before either existed)."""
        out = dataclasses.asdict(self)
        for key in ("variant", "wrap_x"):
            if not out[key]:
                del out[key]
        return out


class CivGame(Game):
    name = "civ"

    def __init__(self, config: CivConfig | None = None, **overrides):
        config = config or CivConfig()
        if overrides:
            config = dataclasses.replace(config, **overrides)
        self.config = config
        self.num_players = config.num_players
        self.ruleset = load_ruleset(config.ruleset)
        self.tables = compile_tables(self.ruleset)
        self.vet_power = tuple(v / 100 for v in self.ruleset.params["veteran_power_pct"])
        self.terrain_defense = tuple(t.defense_pct for t in self.ruleset.terrains)
        self.terrain_move = tuple(t.move_cost for t in self.ruleset.terrains)
        self._maps: dict[int, tuple[MapData, list[int]]] = {}
        self.loaded_maps: dict[tuple, MapData] = {}  # maps of states read from JSON
        # Build/research options (and the AI's picks among them) by techs and buildings bitmasks;
        # see legal.build_options.
        self.options_cache: dict = {}
        # Agent name -> (kind, id), see legal.agent_key.
        self.agent_keys: dict[str, tuple[str, int]] = {}
        self.state_features = features.extractors(self.tables)  # (name, extractor) in order
        # What the variant's sacred terrain does (both 0 in the plain game).
        self.sacred_citizens = variants.EXTRA_CITIZENS if config.variant == variants.SACRED else 0
        self.sacred_end = config.variant == variants.SACRED_END

    def __getstate__(self) -> dict:
        # The feature extractors are closures over the tables: rebuilt, not pickled.
        state = self.__dict__.copy()
        del state["state_features"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.state_features = features.extractors(self.tables)

    # --- states ------------------------------------------------------------------------------
    def map_for_seed(self, seed: int) -> tuple[MapData, list[int]]:
        if seed not in self._maps:
            if len(self._maps) > 8:
                self._maps.clear()
            c = self.config
            m = generate_map(self.tables, c.width, c.height, seed, c.land_fraction, c.wrap_x)
            if c.variant:
                m = dataclasses.replace(m, sacred=variants.sacred_terrain(self.tables, m, seed))
            self._maps[seed] = (m, start_tiles(self.tables, m, c.num_players, seed))
        return self._maps[seed]

    def blank_state(self, map_data: MapData) -> CivState:
        """An empty state on `map_data` (no units, no cities); used by the JSON reader."""
        return CivState(self, map_data)

    def new_initial_state(self, seed: int) -> CivState:
        m, starts = self.map_for_seed(int(seed))
        s = self.blank_state(m)
        names = self.tables.unit_names
        for player, tile in enumerate(starts):
            for unit_name in self.ruleset.params["start_units"]:
                s.add_unit(player, names.index(unit_name), tile)
        return s

    def state_from_json(self, data: dict) -> CivState:
        return serialize.state_from_json(self, data)

    def state_feature_names(self) -> list[str]:
        return [name for name, _ in self.state_features]

    # --- players -----------------------------------------------------------------------------
    def label_vocabulary(self) -> dict[str, frozenset[str]]:
        from nlmcs.games.civ.labels import vocabulary

        return vocabulary(self.tables)

    def goal_words(self) -> tuple[str, ...]:
        from nlmcs.games.civ.labels import GOAL_WORDS

        return GOAL_WORDS

    def rules_of(self, ruleset, sha256) -> bool:
        from nlmcs.games.civ.ruleset import RulesetError

        if not ruleset or not sha256:
            return False
        try:
            other = load_ruleset(ruleset)
        except RulesetError:
            return False
        return other.sha256.startswith(sha256) and self.ruleset.same_but_government(other)

    def compiled_players(self, state, policies, first: int = -1):
        """The compiled engine (`compiled.play.Engine`) when every player is a random player,
        the built-in AI (no subclass: one could move differently) or `UNIFORM_ROLLOUT`, and the
        map is small enough for the AI's tables; else None. numba loads only here."""
        from nlmcs.games.base import UNIFORM_ROLLOUT
        from nlmcs.games.civ.ai import BuiltinAI
        from nlmcs.games.civ.policies import RandomPolicy

        if not all(type(p) in (RandomPolicy, BuiltinAI) or p is UNIFORM_ROLLOUT
                   for p in policies):
            return None
        from nlmcs.games.civ.compiled.ai import MAX_TILES
        from nlmcs.games.civ.compiled.play import Engine

        if state.map.n > MAX_TILES and any(type(p) is BuiltinAI for p in policies):
            return None
        return Engine(state, policies, first)

    def compiled_states(self, state, policies, player: int):
        """`compiled.board_state.BoardGame` for these seats, where the compiled engine has
        them (`compiled_players`)."""
        from nlmcs.games.base import UNIFORM_ROLLOUT

        seats = [UNIFORM_ROLLOUT if p == player else policy for p, policy in enumerate(policies)]
        engine = self.compiled_players(state, seats, first=player)
        if engine is None:
            return None
        from nlmcs.games.civ.compiled.board_state import BoardGame

        return BoardGame(state.clone(), engine)

    def policy(self, spec: str) -> Policy:
        from nlmcs.games.civ.ai import BuiltinAI
        from nlmcs.games.civ.policies import GreedyPolicy, RandomPolicy

        name, _, level = str(spec).partition(":")
        if name == "random" and not level:
            return RandomPolicy()
        if name == "greedy" and not level:
            return GreedyPolicy()
        if name == "builtin":
            return BuiltinAI(level or "normal")
        if name == "howto" and not level:
            from nlmcs.games.civ.ai import HowtoPlayer

            return HowtoPlayer()
        raise UserInputError(
            f"unknown player {spec!r} (known: builtin[:easy|normal|hard], howto, random, greedy)"
        )


def random_generator(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)
