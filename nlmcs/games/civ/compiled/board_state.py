"""A `State` held on a `Board`: what a learned search's roll-outs play on with the compiled engine.

The search reads a simulated state through a few questions (each agent's legal actions, its
words and its candidates' words, the score at the end) and plays a turn by giving its player's
joint move; the other players are seats of the compiled engine (`play.Engine`), chosen and
applied in the kernel with the end of turn. Legal actions and labels come from one compiled
pass per turn and player (`legal.player_actions`, `labels.player_labels`); their words from
caches keyed by those small integers, built from the reference's own functions, so they are the
reference's words (`tests/games/test_civ_board_state.py` compares them state by state).
The action lists it gives are shared with its caches: read them, do not change them. Turns
are played whole (`apply_action` and `end_turn` refuse); everything else a `State` offers is
answered by unpacking the board into a reference state.
"""

from __future__ import annotations

import numpy as np

from nlmcs.games.base import Action, AgentId, Picks, State
from nlmcs.games.civ import labels as ref_labels
from nlmcs.games.civ.compiled import codes
from nlmcs.games.civ.compiled.board import (
    C_ID,
    G_NU,
    G_OVER,
    G_TURN,
    G_WINNER,
    U_ID,
    Board,
    copy,
    grown,
    pack,
    unpack,
)
from nlmcs.games.civ.compiled.labels import CITY_FLAGS, CIV_FLAGS, UNIT_FLAGS, player_labels
from nlmcs.games.civ.compiled.legal import CITY, CIV, player_actions
from nlmcs.games.civ.compiled.play import make_room, turn_with
from nlmcs.games.civ.compiled.rules import score
from nlmcs.games.civ.tables import DIRECTIONS


class BoardGame:
    """What every board state of one game, map and seating shares: the engine's tables and
    seats, code <-> `Action` tables, and the word caches."""

    def __init__(self, like, engine):
        self.like = like  # a reference state of this game and map (labels' tables, unpacking)
        self.engine = engine
        self.table = codes.action_table(like.tables)
        self.code_of = {a: c for c, a in reversed(list(enumerate(self.table)))}
        # the code `play_turn` gives each code's action (the first code of an equal action)
        self.canonical = np.array([self.code_of[a] for a in self.table], np.int64)
        self.unit_names = like.tables.unit_names
        self.terrain_names = like.tables.terrain_names
        self.n_kinds = len(self.unit_names)
        self.agent_ids: dict[tuple[int, int], str] = {}
        self.words: dict[tuple, tuple[str, ...]] = {}  # (kind, tile key, flags) -> state words
        self.action_words: dict[tuple[int, int], tuple[str, ...]] = {}  # (code, key) -> words
        self.candidates: dict[tuple, list[tuple]] = {}  # `_View.candidate_labels`
        self.fixed = tuple(self._fixed(c) for c in range(len(self.table)))

    def _fixed(self, code: int) -> tuple[str, ...] | None:
        if code < codes.FORTIFY:
            return None
        return ref_labels.action_labels(self.like, "civ:0", self.table[code])

    def fits(self, s) -> bool:
        """Whether reference state `s` is of this game and map."""
        like = self.like
        return getattr(s, "game", None) is like.game and getattr(s, "map", None) is like.map

    def state(self, s) -> BoardState:
        """A board state holding reference state `s` (a copy)."""
        return BoardState(self, pack(s))

    def packed(self, s) -> Board:
        """Reference state `s` on a board, for `copied`, with the room a roll-out's new units
        and cities take (`ROLLOUT_SPARE`): a copy that runs out of rows is grown in Python."""
        return pack(s, spare=ROLLOUT_SPARE)

    def copied(self, b: Board) -> BoardState:
        """A board state holding a copy of `b` (a board of this game: `packed`)."""
        return BoardState(self, copy(b))

    def agent_id(self, kind: int, key: int) -> str:
        found = self.agent_ids.get((kind, key))
        if found is None:
            name = "civ" if kind == CIV else "city" if kind == CITY else "unit"
            found = self.agent_ids[(kind, key)] = f"{name}:{key}"
        return found

    def state_words(self, kind: int, tile_key: int, flags: int) -> tuple[str, ...]:
        key = (kind, tile_key, flags)
        found = self.words.get(key)
        if found is None:
            found = self.words[key] = self._state_words(kind, tile_key, flags)
        return found

    def _state_words(self, kind: int, tile_key: int, flags: int) -> tuple[str, ...]:
        """The words `labels.state_labels` gives an agent with these facts."""
        def on(names):
            return [w for k, w in enumerate(names) if flags >> k & 1]

        if kind == CIV:
            return ("civilization", *on(CIV_FLAGS))
        tile = ref_labels.improved_tile_words(self.like, tile_key >> 3, tile_key & 7)
        if kind != CITY:
            return (*tile, *on(UNIT_FLAGS))
        words = ["city", *tile]
        capital, large, growing, starving, *rest = CITY_FLAGS
        if flags & 1:
            words.append(capital)
        words.append(large if flags & 2 else "small")
        if flags & 4:
            words.append(growing)
        else:
            words.append("hungry")
            if flags & 8:
                words.append(starving)
        words.extend(w for k, w in enumerate(rest, start=4) if flags >> k & 1)
        return tuple(words)

    def step_words(self, code: int, key: int) -> tuple[str, ...]:
        """`labels._step_labels` of a move or an attack with these facts."""
        found = self.action_words.get((code, key))
        if found is None:
            kind, d = ("move", code) if code < codes.ATTACK0 else ("attack", code - codes.ATTACK0)
            if key < 0:
                found = (kind, DIRECTIONS[d])
            elif kind == "move":
                dest = self.terrain_names[key >> 1]
                found = ("move", DIRECTIONS[d], dest, "city") if key & 1 else (
                    "move", DIRECTIONS[d], dest)
            else:
                place, city = divmod(key, 2)
                terr, defender = divmod(place, self.n_kinds + 1)
                words = ["attack", DIRECTIONS[d], "enemy", self.terrain_names[terr]]
                if defender:
                    words.append(self.unit_names[defender - 1])
                if city:
                    words.append("city")
                found = tuple(words)
            self.action_words[(code, key)] = found
        return found


ROLLOUT_SPARE = 64
"""Unit and city rows a roll-out's board has free at its start (`packed`)."""


class BoardState(State):
    """A civ state on a board (a roll-out's): the questions a search asks, and `play_turn`."""

    def __init__(self, ctx: BoardGame, b: Board):
        self.ctx = ctx
        self.b = b
        self._view: dict[int, _View] = {}
        self._unpacked = None  # this turn's reference state, once asked for
        self._make_room()

    def _make_room(self) -> None:
        """Room for the next turn's new units and cities (`play.make_room`, else grown)."""
        b = self.b
        if not b.G[G_OVER] and not make_room(b.U, b.C, b.T, b.G):
            self.b = grown(b)

    # --- what the search asks -----------------------------------------------------------------
    def clone(self) -> BoardState:
        return BoardState(self.ctx, copy(self.b))

    @property
    def turn(self) -> int:
        return int(self.b.G[G_TURN])

    @property
    def num_players(self) -> int:
        return self.b.PL.shape[0]

    def view(self, player: int) -> _View:
        found = self._view.get(player)
        if found is None:
            found = self._view[player] = _View(self, player)
        return found

    def agents(self, player: int) -> list[AgentId]:
        return list(self.view(player).index)

    def agent_actions(self, player: int) -> list[tuple[AgentId, list[Action]]]:
        return self.view(player).candidates

    def agent_keys(self, player: int) -> list[tuple]:
        v = self.view(player)
        return [v.key(a) for a in range(len(v.kind_list))]

    def legal_actions(self, agent: AgentId) -> list[Action]:
        found = self._find(agent)
        return [] if found is None else found[0].candidates[found[1]][1]

    def _find(self, agent: AgentId):
        for v in self._view.values():
            a = v.index.get(agent)
            if a is not None:
                return v, a
        for p in range(self.num_players):
            a = self.view(p).index.get(agent)
            if a is not None:
                return self._view[p], a
        return None

    def agent_labels(self, agent: AgentId) -> tuple[str, ...]:
        found = self._find(agent)
        return () if found is None else found[0].agent_labels(found[1])

    def state_labels(self, agent: AgentId) -> tuple[str, ...]:
        found = self._find(agent)
        return () if found is None else found[0].state_labels(found[1])

    def action_labels(self, agent: AgentId, action: Action) -> tuple[str, ...]:
        found = self._find(agent)
        if found is None:
            return ref_labels.action_labels(self.unpacked(), agent, action)
        v, a = found
        return v.action_labels(a, [action])[0]

    def actions_labels(self, agent: AgentId, actions) -> list[tuple[str, ...]]:
        found = self._find(agent)
        if found is None:
            return ref_labels.actions_labels(self.unpacked(), agent, actions)
        return found[0].action_labels(found[1], actions)

    def goal_labels(self, agent: AgentId, actions) -> list[tuple[str, ...]]:
        """The reference's goal words, read off this turn's reference state (no compiled
        version yet: only a network laid out with goal words asks)."""
        return ref_labels.goal_labels(self.unpacked(), agent, actions)

    def candidate_labels(self, agent: AgentId, actions) -> list[tuple]:
        found = self._find(agent)
        if found is None:
            return super().candidate_labels(agent, actions)
        return found[0].candidate_labels(found[1], actions)

    def candidates_key(self, agent: AgentId, actions) -> tuple | None:
        found = self._find(agent)
        if found is None or actions is not found[0].candidates[found[1]][1]:
            return None
        return found[0].key(found[1])

    def is_terminal(self) -> bool:
        return bool(self.b.G[G_OVER])

    def winner(self) -> int | None:
        w = int(self.b.G[G_WINNER])
        return None if w < 0 else w

    def score(self, player: int) -> float:
        b, mk, rk = self.b, self.ctx.engine.mk, self.ctx.engine.rk
        return float(score(b.C, b.PL, b.G, mk.TI, mk.MS, rk.PR, player))

    # --- playing ------------------------------------------------------------------------------
    def play_turn(self, player: int, joint: dict[AgentId, Action], rng: np.random.Generator
                  ) -> None:
        """`base.step` on the board: `player`'s `joint` (agents missing from it wait), the
        other players' seats choosing after it, the moves applied, the turn ended."""
        v = self.view(player)
        e = self.ctx.engine
        if isinstance(joint, Picks):  # every agent, in order: the codes of its picks
            chosen = self.ctx.canonical[v.out[v.starts + joint.index]]
            turn_with(self.b, e.mk, e.rk, e.am, e.ar, e.seats, player, v.kinds, v.rows,
                      chosen, rng)
        else:
            code_of, index = self.ctx.code_of, v.index
            picked, chosen = [], []
            for agent, action in joint.items():
                a = index.get(agent)
                if a is not None:
                    picked.append(a)
                    chosen.append(code_of.get(action, -1))
            turn_with(self.b, e.mk, e.rk, e.am, e.ar, e.seats, player, v.kinds[picked],
                      v.rows[picked], np.array(chosen, np.int64), rng)
        self._view, self._unpacked = {}, None
        self._make_room()

    def engine_arrays(self) -> tuple:
        """The board and the engine's tables as compiled turns take them (`kernels.turns`):
        board, map, rules, the AI's tables, seats, each code's canonical code."""
        e = self.ctx.engine
        return self.b, e.mk, e.rk, e.am, e.ar, e.seats, self.ctx.canonical

    def turns_played(self) -> None:
        """What `play_turn` does after its turn, for turns compiled code played on the board:
        the turn's views forgotten, room made for the next."""
        self._view, self._unpacked = {}, None
        self._make_room()

    # --- the rest, on a reference state -------------------------------------------------------
    def unpacked(self):
        """This state as a reference `CivState` (one per turn: read it, do not change it)."""
        if self._unpacked is None:
            self._unpacked = unpack(self.b, self.ctx.like)
        return self._unpacked

    def apply_action(self, agent, action, rng) -> bool:
        raise NotImplementedError("a board state plays whole turns (play_turn)")

    def end_turn(self, rng) -> None:
        raise NotImplementedError("a board state plays whole turns (play_turn)")

    def stats(self, player: int) -> dict[str, float]:
        return self.unpacked().stats(player)

    def state_vector(self, player: int) -> np.ndarray:
        return self.unpacked().state_vector(player)

    def to_json(self) -> dict:
        return self.unpacked().to_json()


class _View:
    """One player's agents on a board in one turn: codes, rows, and labels' facts; their ids
    and `Action` lists are made on first use (a compiled choice needs neither)."""

    __slots__ = ("s", "kinds", "rows", "offsets", "agents", "keys", "_candidates",
                 "_index", "_codes", "kind_list", "_keys", "out", "starts", "player")

    def __init__(self, s: BoardState, player: int):
        ctx, b = s.ctx, s.b
        mk, rk = ctx.engine.mk, ctx.engine.rk
        out, offsets, kinds, rows = player_actions(b.U, b.C, b.PL, b.T, b.G, mk.NB, mk.TI, mk.RAD,
                                                   mk.MS, rk.UK, rk.IT, rk.TR, rk.PR, player)
        agents, keys = player_labels(b.U, b.C, b.T, b.G, mk.NB, mk.TI, mk.RAD, rk.UK, rk.UF,
                                     rk.TF, rk.VP, rk.PR, out, offsets, kinds, rows)
        self.s, self.kinds, self.rows, self.offsets = s, kinds, rows, offsets.tolist()
        self.kind_list = kinds.tolist()
        self._keys: list[tuple | None] = [None] * len(self.kind_list)
        self.agents, self.keys = agents.tolist(), keys.tolist()
        self._codes = out.tolist()
        self.out, self.starts, self.player = out, offsets[:-1], player
        self._candidates: list | None = None
        self._index: dict | None = None

    @property
    def candidates(self) -> list[tuple[AgentId, list[Action]]]:
        if self._candidates is None:
            self._make()
        return self._candidates

    @property
    def index(self) -> dict[AgentId, int]:
        if self._index is None:
            self._make()
        return self._index

    def _make(self) -> None:
        s, player = self.s, self.player
        b, table, agent_id = s.b, s.ctx.table, s.ctx.agent_id
        ids = b.U[:b.G[G_NU], U_ID]
        self._candidates, self._index = [], {}
        o = self.offsets
        for a, (kind, row) in enumerate(zip(self.kind_list, self.rows.tolist(), strict=True)):
            key = player if kind == CIV else int(b.C[row, C_ID] if kind == CITY else ids[row])
            agent = agent_id(kind, key)
            self._index[agent] = a
            self._candidates.append((agent, [table[c] for c in self._codes[o[a]:o[a + 1]]]))

    def agent_labels(self, a: int) -> tuple[str, ...]:
        kind = self.kind_list[a]
        if kind == CIV:
            return ("civilization",)
        if kind == CITY:
            return ("city",)
        return (self.s.ctx.unit_names[self.agents[a][2]],)

    def state_labels(self, a: int) -> tuple[str, ...]:
        tile_key, flags, _ = self.agents[a]
        return self.s.ctx.state_words(self.kind_list[a], tile_key, flags)

    def candidate_labels(self, a: int, actions) -> list[tuple]:
        """`State.candidate_labels` of agent `a`, kept by what decides them (the agent's facts
        and its candidates' codes and keys): roll-outs meet the same situations again and
        again."""
        if actions is not self.candidates[a][1]:
            return State.candidate_labels(self.s, self.candidates[a][0], actions)
        key = self.key(a)
        cache = self.s.ctx.candidates
        found = cache.get(key)
        if found is None:
            if len(cache) > 200_000:  # bound memory over long games
                cache.clear()
            who, where = self.agent_labels(a), self.state_labels(a)
            found = cache[key] = [(who, words, action.kind, where) for words, action in
                                  zip(self.action_labels(a, actions), actions, strict=True)]
        return found

    def key(self, a: int) -> tuple:
        """What decides agent `a`'s candidates and their words: its kind, its facts, its
        candidates' codes and keys, and the game and map they are read in (`ctx`)."""
        found = self._keys[a]
        if found is None:
            lo, hi = self.offsets[a], self.offsets[a + 1]
            found = self._keys[a] = (self.s.ctx, self.kind_list[a], *self.agents[a],
                                     *self._codes[lo:hi], -2, *self.keys[lo:hi])
        return found

    def action_labels(self, a: int, actions) -> list[tuple[str, ...]]:
        """Labels of `actions` of agent `a`: its candidates' keys where they are its
        candidates in order (the search's case), else looked up by code."""
        ctx = self.s.ctx
        lo, hi = self.offsets[a], self.offsets[a + 1]
        cands = self.candidates[a][1]
        if actions is cands:
            codes_, keys = self._codes[lo:hi], self.keys[lo:hi]
        else:  # some of its candidates (a datapoint's action), else the reference's words
            mine = self._codes[lo:hi]
            codes_ = [ctx.code_of.get(x, -1) for x in actions]
            if not all(c in mine for c in codes_):
                return ref_labels.actions_labels(self.s.unpacked(), self.candidates[a][0],
                                                 actions)
            keys = [self.keys[lo + mine.index(c)] for c in codes_]
        fixed, step = ctx.fixed, ctx.step_words
        return [fixed[c] if fixed[c] is not None else step(c, k)
                for c, k in zip(codes_, keys, strict=True)]
