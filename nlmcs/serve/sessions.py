"""The table of games in play: each browser game is a `GameSession` with its own game, state,
random generator, opponent and corpus log, so games from different tabs never mix.

A turn follows the engine's order (`State.apply_joint_actions`): the opponent's joint action is
chosen from the state at the start of the turn, and players act in turn-rotating order, so on
some turns the opponent has moved before the human sees the board and on others it moves when
the human ends the turn. Each of the human's agents acts at most once a turn, and only with an
action the engine lists as legal now; anything else is a `RequestError` that changes nothing.
Requests drive the turns here, so the game loop of `nlmcs.games.runner` is not used whole, but
every decision goes through its decision step (`apply_decision`) and the corpus recorder hears
the loop's events.

Every decision, the human's included (seat kind "human"), goes through the corpus recorder
(`nlmcs.games.record.CorpusRecorder`, the nlmcs-corpus/1 format) into
`corpora/<corpus>/logs/human-<id>.jsonl`. The log is flushed at the start of every turn and ends
with that turn's full state, so a crash or a closed tab loses at most the current turn, and a
game missing from memory (evicted, or the server restarted) resumes from its log.
"""

from __future__ import annotations

import collections
import logging
import re
import secrets
import threading
import time
from pathlib import Path

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.games import game_entry, make_game
from nlmcs.games.base import Action, Game
from nlmcs.games.civ.legal import parse_agent
from nlmcs.games.record import CorpusRecorder
from nlmcs.games.runner import GameResult, apply_decision, policy_meta
from nlmcs.seeds import TURN_CHANCE, turn_rng
from nlmcs.serve.config import GAME, MAP_PRESETS, ServeConfig
from nlmcs.serve.logs import LOG_PREFIX, RequestError, log_finished, log_turn, read_progress
from nlmcs.serve.opponents import close_opponent, make_opponent
from nlmcs.serve.views import describe_move, unit_before

log = logging.getLogger(__name__)
notice = logging.getLogger("nlmcs.notice")

ID_RE = re.compile(r"[0-9a-f]{16}")


class GameSession:
    """One game in play. Callers hold `lock` around every method (one request at a time)."""

    def __init__(self, *, game_id: str, game: Game, state, seed: int, opponent,
                 recorder: CorpusRecorder, human: int, log_path: Path):
        self.id = game_id
        self.game = game
        self.state = state
        self.seed = seed
        self.human = human
        self.opponent = opponent
        self.opponent_name = getattr(opponent, "name", "opponent")
        self.recorder = recorder
        self.log_path = log_path
        self.lock = threading.Lock()
        self.acted: dict[str, Action] = {}
        """The human's actions this turn, by agent."""
        self.pending: dict[int, dict] = {}
        """Opponent joint actions chosen this turn and not yet played, by player."""
        self.opponent_moves: list[dict] = []
        """The opponent's moves since the human last ended a turn (`views.describe_move`)."""
        self.finished = False
        self.closed = False
        """Put back to its log (evicted or the server closing): this object plays no more."""
        self.touched = time.monotonic()
        self.rng = np.random.default_rng(0)

    # --- turns -------------------------------------------------------------------------------
    def begin_turn(self, *, record_turn: bool = True) -> None:
        """Start the state's turn: record it (and flush the log: every earlier turn is then on
        disk), choose the opponent's joint action, and play it now if it moves first."""
        s = self.state
        # Chance of turn t draws from its own generator, so a resumed game goes on the same way.
        self.rng = turn_rng(self.seed, s.turn)
        if record_turn:
            self.recorder.on_turn(s)
        self.recorder.flush()
        self.acted = {}
        self.pending = {p: self.opponent.joint_action(s, p, self.rng)
                        for p in range(s.num_players) if p != self.human}
        order = s.player_order()
        for p in order[: order.index(self.human)]:
            self._play_opponent(p)

    def end_turn(self, *, turn: int) -> None:
        """The human is done: the opponents still to move play, the turn closes, the next
        begins (or the game ends and its result is written)."""
        self._check_open(turn)
        self.opponent_moves = []
        order = self.state.player_order()
        for p in order[order.index(self.human) + 1:]:
            self._play_opponent(p)
        if not self.finished:
            self.state.end_turn(self.rng)
            if self.state.is_terminal():
                self._finish()
            else:
                self.begin_turn()

    def act(self, *, turn: int, agent: str, kind: str, arg) -> None:
        """Play one of the human's agents' actions, if the engine allows it now."""
        self._check_open(turn)
        s = self.state
        if agent not in s.agents(self.human):
            raise self._not_acting(agent)
        if agent in self.acted:
            raise RequestError(409, f"{agent} already acted this turn "
                                    f"({self.acted[agent].kind}); end the turn to act again")
        legal = s.legal_actions(agent)
        # The engine's own action object: a JSON 2.0 or true must not pass for the integer 2 or 1.
        action = next((a for a in legal if a.kind == kind and type(a.arg) is type(arg)
                       and a.arg == arg), None)
        if action is None:
            shown = ", ".join(_show(a.kind, a.arg) for a in legal[:12])
            more = ", ..." if len(legal) > 12 else ""
            raise RequestError(422, f"{_show(kind, arg)} is not a legal action of {agent} now "
                                    f"(legal: {shown}{more})")
        self._apply(self.human, agent, action)
        self.acted[agent] = action
        if s.is_terminal() and not self.finished:
            self._finish()

    def advice_state(self, agent: str):
        """A copy of the state for the text agent to search from, if `agent` may act now."""
        if self.finished:
            raise RequestError(409, f"game {self.id} is over")
        if agent not in self.state.agents(self.human):
            raise self._not_acting(agent)
        return self.state.clone()

    # --- helpers -----------------------------------------------------------------------------
    def _check_open(self, turn: int) -> None:
        if self.closed and not self.finished:
            raise RequestError(409, f"game {self.id} was put back to its log; reload the game")
        if self.finished:
            raise RequestError(409, f"game {self.id} is over")
        if turn != self.state.turn:
            raise RequestError(409, f"stale request: it is for turn {turn}, but the game is at "
                                    f"turn {self.state.turn}; reload the game")

    def _not_acting(self, agent: str) -> RequestError:
        """Why `agent` may not act now: not the human's, busy, or not in the game at all."""
        s = self.state
        kind, key = parse_agent(agent)
        thing = {"unit": s.units, "city": s.cities}.get(kind, {}).get(key)
        if kind == "civ" and 0 <= key < s.num_players:
            return RequestError(403, f"{agent} is the opponent's civilization")
        if thing is None:
            return RequestError(404, f"no agent {agent!r} in this game"
                                     + (" (it may have died)" if kind in ("unit", "city") else ""))
        if thing.owner != self.human:
            return RequestError(403, f"{agent} belongs to the opponent")
        return RequestError(409, f"{agent} is busy with its work and cannot act this turn")

    def _apply(self, player: int, agent: str, action: Action) -> dict:
        """Apply one decision and record it with the player's state vectors around it."""
        s = self.state
        before_info = unit_before(s, agent)
        applied = apply_decision(s, s.turn, player, agent, action, self.rng, [self.recorder])
        return describe_move(s, player, agent, action, applied, before_info)

    def _play_opponent(self, player: int) -> None:
        for agent, action in self.pending.pop(player, {}).items():
            if self.finished:
                return
            self.opponent_moves.append(self._apply(player, agent, action))
            if self.state.is_terminal():
                self._finish()

    def _finish(self) -> None:
        s = self.state
        result = GameResult(winner=s.winner(), turns=s.turn, seed=self.seed,
                            scores=[float(s.score(p)) for p in range(s.num_players)],
                            finished=True)
        self.recorder.on_end(s, result)
        self.finished = True
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            close_opponent(self.opponent)

    def summary(self) -> dict:
        s = self.state
        return {"id": self.id, "turn": s.turn, "max_turns": s.max_turns, "over": self.finished,
                "opponent": self.opponent_name, "in_memory": True,
                "scores": [round(float(s.score(p)), 2) for p in range(s.num_players)]}


class SessionTable:
    """Every game of one server, by id. `lock` guards the table and the log folder (a game's
    first log write and an ingest never overlap)."""

    def __init__(self, config: ServeConfig, *, logs_dir: Path):
        self.config = config
        self.logs = logs_dir
        self.lock = threading.Lock()
        self._games: dict[str, GameSession] = {}
        self._started: collections.deque[float] = collections.deque()  # new games' times

    def _make_game(self, preset: str) -> Game:
        options = game_entry(GAME).options(map_preset=preset, max_turns=self.config.max_turns)
        return make_game(GAME, **options, ruleset=self.config.ruleset)

    def _opponent(self, game: Game, spec: str, seed: int):
        c = self.config
        return make_opponent(game, spec, seed=seed, rollouts=c.opponent_rollouts,
                             depth=c.opponent_depth, manual=c.manual)

    def create(self, *, seed: int | None = None, preset: str | None = None) -> GameSession:
        """A new game on a fresh map (seeded by `seed`, else at random)."""
        preset = preset or self.config.map
        if preset not in MAP_PRESETS:
            raise RequestError(422, f"unknown map {preset!r} (known: {', '.join(MAP_PRESETS)})")
        with self.lock:
            now = time.monotonic()
            while self._started and now - self._started[0] >= 60:
                self._started.popleft()
            if len(self._started) >= self.config.new_games_per_minute:
                raise RequestError(429, f"{self.config.new_games_per_minute} new games in the "
                                        "last minute already; wait a little, or resume one")
            self._started.append(now)
        if seed is None:
            seed = secrets.randbelow(2**31)
        game_id = secrets.token_hex(8)
        game = self._make_game(preset)
        state = game.new_initial_state(seed)
        opponent = self._opponent(game, self.config.opponent, seed)
        path = self.logs / f"{LOG_PREFIX}{game_id}.jsonl"
        recorder = CorpusRecorder(path, chance=TURN_CHANCE)
        human = self.config.human
        players = [{"player": human, "kind": "human", "name": "human"}]
        players += [policy_meta(p, opponent) for p in range(game.num_players) if p != human]
        session = GameSession(game_id=game_id, game=game, state=state, seed=seed,
                              opponent=opponent, recorder=recorder, human=human, log_path=path)
        with self.lock:
            self._make_room()
            recorder.on_start(game, state, seed, sorted(players, key=lambda p: p["player"]))
            with session.lock:
                session.begin_turn()
            self._games[game_id] = session
        return session

    def get(self, game_id: str) -> GameSession:
        """The game `game_id`, from memory or resumed from its log; 404 if there is none."""
        if not isinstance(game_id, str) or not ID_RE.fullmatch(game_id):
            raise RequestError(404, f"unknown game id {str(game_id)[:40]!r}")
        with self.lock:
            session = self._games.get(game_id)
            if session is None:
                self._make_room()
                session = self._resume(game_id)
                self._games[game_id] = session
            session.touched = time.monotonic()
            return session

    def _make_room(self) -> None:
        """Keep at most `max_games` in memory: put back the least recently used (a finished
        game is done with; an unfinished one resumes from its log when asked for again)."""
        while len(self._games) >= self.config.max_games:
            oldest = min(self._games.values(), key=lambda g: (not g.finished, g.touched))
            with oldest.lock:
                oldest.close()  # its log ends with the current turn's start: resumable
            del self._games[oldest.id]

    def _resume(self, game_id: str) -> GameSession:
        path = self.logs / f"{LOG_PREFIX}{game_id}.jsonl"
        if not path.is_file():
            raise RequestError(404, f"unknown game id {game_id!r}")
        header, turn_line = read_progress(path)
        if turn_line is None:
            raise RequestError(404, f"game {game_id} is finished (its log is {path})")
        try:
            # exactly the recorded configuration
            game = game_entry(GAME).rebuild(header.get("config") or {})
            state = game.state_from_json(turn_line["state"])
            human = next(p["player"] for p in header["players"] if p.get("kind") == "human")
            other = next(p for p in header["players"] if p.get("kind") != "human")
            opponent = self._opponent(game, str(other.get("name", other["kind"])),
                                      int(header["seed"]))
        except (UserInputError, KeyError, TypeError, ValueError, StopIteration) as err:
            raise RequestError(409, f"game {game_id} cannot be resumed from {path}: "
                                    f"{err}") from None
        recorder = CorpusRecorder(path, chance=TURN_CHANCE)
        recorder.continue_game(header["game_id"], state)
        session = GameSession(game_id=game_id, game=game, state=state, seed=int(header["seed"]),
                              opponent=opponent, recorder=recorder, human=human, log_path=path)
        with session.lock:
            session.begin_turn(record_turn=False)
        log.info("resumed game %s at turn %d from %s", game_id, state.turn, path)
        return session

    def summaries(self) -> list[dict]:
        """Games in memory and unfinished games whose logs can resume them, newest first."""
        with self.lock:
            out = {g.id: g.summary() for g in self._games.values()}
        if self.logs.is_dir():
            newest = sorted(self.logs.glob(f"{LOG_PREFIX}*.jsonl"),
                            key=lambda p: p.stat().st_mtime, reverse=True)
            for path in newest[:self.config.listed_logs]:
                game_id = path.stem.removeprefix(LOG_PREFIX)
                if game_id not in out and ID_RE.fullmatch(game_id) and not log_finished(path):
                    # the turn it resumes at, so the resume offer names the turn reached
                    out[game_id] = {"id": game_id, "turn": log_turn(path), "over": False,
                                    "in_memory": False}
        return list(out.values())

    def finished_logs(self) -> list[Path]:
        """Logs of finished games (this run's and earlier runs'), oldest first."""
        if not self.logs.is_dir():
            return []
        paths = sorted(self.logs.glob(f"{LOG_PREFIX}*.jsonl"), key=lambda p: p.stat().st_mtime)
        return [p for p in paths if log_finished(p)]

    def ingest_finished(self):
        """Mine every finished game's log into the corpus (a log already there is a no-op).
        Returns the store's `IngestSummary`, or None when no game has finished yet."""
        from corpus.store import ingest, store_dir

        with self.lock:
            paths = self.finished_logs()
            if not paths:
                return None
            return ingest(paths, name=store_dir(self.config.corpus))

    def close(self) -> None:
        """Release every opponent's resources (the logs are already complete to the turn)."""
        with self.lock:
            for session in self._games.values():
                with session.lock:
                    session.close()
            self._games.clear()


def _show(kind: str, arg) -> str:
    return kind if arg is None else f"{kind} {arg!r}"
