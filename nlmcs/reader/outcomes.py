"""What the game's outcome says of single moves: the reader's training target.

At sampled decisions of games the built-in AI plays against itself, one agent of player 0 tries
each of a few candidate moves (the AI's own choice and others drawn at random); everything else
that turn, and every later turn, is the AI's, and the game is played to its end. The margin at
the end is that move's value; every candidate's game continues from the same random stream, so
the differences between them are the moves' doing as far as common random numbers can make
them. This is the advice audit's follow-or-break measurement made for every kind of move, with
no rule written by hand: it backs moves by what they are worth many turns later, which the
search's own statistics (roll-outs of a few turns) cannot.

The labels depend on the game only, never on a manual, so a manual's reader and its twin's are
trained on the same ones. Labelling is resumable: `outcomes.jsonl` is a store of the project's
one run store (`nlmcs.runs`), one fsynced line per game played by the one job loop
(`nlmcs.jobs`), under the file's writer lock; a line cut by a crash is dropped by the store's
tail repair and its game played again. Unlike a run folder's results, the file starts with its
settings (`{"spec": ...}`), as it always has: it is one file, named by `--outcomes`, that
several readers (a manual's and its twin's) label into and read.
"""

from __future__ import annotations

import json
from concurrent.futures import Executor
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.fields import MAX_GAMES, MAX_SEED, check_fields, option
from nlmcs.files import write_atomic
from nlmcs.jobs import local_executor, run_jobs
from nlmcs.locking import store_lock
from nlmcs.runs import JsonLinesStore, read_results, repair_tail
from nlmcs.seeds import game_seed

SALT = 0x7EAD
FORMAT = "nlmcs-reader-outcomes/1"


@dataclass(frozen=True)
class OutcomeSpec:
    games: int = option(200, low=1, high=MAX_GAMES)
    """Games labelled."""
    seed: int = option(0, low=0, high=MAX_SEED)
    """S: labelled game i is played on the map of `map_seed(S, i)`."""
    turns: int = option(100, low=1)
    """Game length: every candidate's game is played to this turn limit."""
    map: str = "small"
    """Map preset."""
    opponent: str = "builtin"
    """Who plays: player 0 outside the tried move, and every other player."""
    points: int = option(16, low=1)
    """Decisions labelled per game: at a random turn, a random kind of agent of player 0
    (unit type, city, civilization), then one agent of that kind."""
    candidates: int = option(4, low=2)
    """Moves tried per decision (the AI's own and others at random)."""
    variant: str = ""
    """A rule variant of the civ game ("": none)."""

    def __post_init__(self) -> None:
        check_fields(self, "labelling option")

    def identity(self) -> dict:
        ident = asdict(self)
        ident.pop("games")  # a run may be extended
        return {"format": FORMAT, **ident}


def map_seed(seed: int, index: int) -> int:
    """Map seed of labelled game `index` (salted: an ablation with the same seed shares none)."""
    return game_seed(seed, SALT, index)


_GAMES: dict = {}


def outcome_game(spec: OutcomeSpec):
    from nlmcs.games import make_game

    key = (spec.map, spec.turns, spec.variant)
    if key not in _GAMES:
        _GAMES[key] = make_game("civ", preset=spec.map, max_turns=spec.turns,
                                **({"variant": spec.variant} if spec.variant else {}))
    return _GAMES[key]


def _finish(game, state, policies, rng, joint) -> float:
    """Apply this turn's joint moves, play on to the end; player 0's margin."""
    from nlmcs.games.runner import play_game

    state.apply_joint_actions(joint, rng)
    if not state.is_terminal():
        play_game(game, policies, seed=0, state=state, rng=rng)
    scores = [float(state.score(p)) for p in range(state.num_players)]
    return scores[0] - max(scores[1:])


def label_game(spec: OutcomeSpec, index: int) -> dict:
    """The labelled decisions of game `index`: one stored line."""
    game = outcome_game(spec)
    seed = map_seed(spec.seed, index)
    rng = np.random.default_rng(np.random.SeedSequence([spec.seed, SALT, seed, 0]))
    pick = np.random.default_rng(np.random.SeedSequence([spec.seed, SALT, seed, 1]))
    policies = {p: game.policy(spec.opponent) for p in range(game.num_players)}
    state = game.new_initial_state(seed)
    wanted = np.bincount(pick.integers(0, spec.turns, size=spec.points), minlength=spec.turns)
    rows = []
    while not state.is_terminal():
        turn = int(state.turn)
        joint = {p: policies[p].joint_action(state, p, rng) for p in range(game.num_players)}
        if turn < spec.turns and wanted[turn]:
            kinds: dict[tuple, list] = {}  # agent kind first, so few settlers still count
            for a, acts in state.agent_actions(0):
                if len(acts) > 1 and a in joint[0]:
                    kinds.setdefault(tuple(state.agent_labels(a)), []).append((a, list(acts)))
            groups = list(kinds.values())
            for _ in range(int(wanted[turn]) if groups else 0):
                group = groups[int(pick.integers(len(groups)))]
                agent, actions = group[int(pick.integers(len(group)))]
                rows.append(_label(game, state, policies, joint, agent, actions, spec, pick,
                                   np.random.SeedSequence([spec.seed, SALT, seed, 2, turn,
                                                           len(rows)])))
        state.apply_joint_actions(joint, rng)
    return {"format": FORMAT, "index": index, "seed": seed, "rows": rows}


def _label(game, state, policies, joint, agent, actions, spec, pick, stream) -> dict:
    ai = actions.index(joint[0][agent])
    others = [i for i in range(len(actions)) if i != ai]
    tried = [ai, *sorted(int(i) for i in pick.choice(
        others, size=min(spec.candidates - 1, len(others)), replace=False))]
    values = []
    for i in tried:
        trial = state.clone()
        moves = {p: dict(j) for p, j in joint.items()}
        moves[0][agent] = actions[i]
        values.append(round(_finish(game, trial, policies, np.random.default_rng(stream),
                                    moves), 6))
    labels = state.actions_labels(agent, [actions[i] for i in tried])
    return {"turn": int(state.turn), "agent": list(state.agent_labels(agent)),
            "state": list(state.state_labels(agent)), "actions": [list(lab) for lab in labels],
            "moves": [[actions[i].kind, actions[i].arg] for i in tried], "margin": values}


def _job(args) -> dict:
    return label_game(*args)


# --- the file --------------------------------------------------------------------------------

def _check_line(row: object) -> str | None:
    """Why a parsed line is neither the settings line nor a labelled game, or None."""
    if isinstance(row, dict) and "spec" in row and "format" not in row:
        return None
    if not isinstance(row, dict) or row.get("format") != FORMAT or \
            not isinstance(row.get("rows"), list) or not isinstance(row.get("index"), int) or \
            not isinstance(row.get("seed"), int):
        return "not a labelled game"
    for k, decision in enumerate(row["rows"]):
        why = _decision_problem(decision)
        if why is not None:
            return f"decision {k} of game {row['index']}: {why}"
    return None


def _decision_problem(d: object) -> str | None:
    """Why one labelled decision cannot be trained on (a row that contradicts itself), or
    None: every tried move has its words and one finite margin."""
    if not isinstance(d, dict):
        return "not a labelled decision"
    margin, actions, moves = d.get("margin"), d.get("actions"), d.get("moves")
    if not all(isinstance(x, list) for x in (margin, actions, moves)) or not margin:
        return "no tried moves"
    if not len(margin) == len(actions) == len(moves):
        return f"{len(margin)} margins for {len(actions)} moves' words and {len(moves)} moves"
    if not all(isinstance(m, int | float) and not isinstance(m, bool) for m in margin):
        return "a margin that is not a number"
    for key in ("agent", "state"):
        if not isinstance(d.get(key), list) or not all(isinstance(w, str) for w in d[key]):
            return f"{key} is not a list of words"
    if not all(isinstance(a, list) and all(isinstance(w, str) for w in a) for a in actions):
        return "a move's words are not a list of words"
    return None


def _game_key(row: dict):
    return row["index"] if "spec" not in row else None


def read_outcomes(path: Path) -> tuple[dict | None, list[dict]]:
    """(header, game lines) of an outcomes file; a damaged line is one error naming it (a cut
    last line is not a game: it is played again)."""
    path = Path(path)
    lines = read_results(path, check=_check_line, key=_game_key,
                         label=lambda i: f"game {i}").rows
    header = lines[0] if lines and "spec" in lines[0] else None
    games = lines[1:] if header is not None else lines
    if any("spec" in g for g in games):
        raise UserInputError(f"{path}: a settings line after the first; not an outcomes file")
    if games and header is None:
        raise UserInputError(f"{path}: no header line; not an outcomes file")
    return header, games


def label_outcomes(spec: OutcomeSpec, path: Path, *, workers: int = 1, progress: bool = True,
                   log=print, executor: Executor | None = None,
                   max_in_flight: int | None = None) -> list[dict]:
    """Label games 0..games-1 into `path` (those already there are kept) on `executor` (a
    Dask cluster's), else in `workers` local processes; every game line."""
    from tqdm import tqdm

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with store_lock(path, what=f"outcomes file {path}"):
        repair_tail(path)  # a half line a crash or a full disk left
        header, games = read_outcomes(path)
        if header is not None and header["spec"] != spec.identity():
            raise UserInputError(f"{path}: labelled with other settings; use another file")
        done = {g["index"] for g in games}
        todo = [i for i in range(spec.games) if i not in done]
        if not todo:
            return [g for g in games if g["index"] < spec.games]
        if header is None:
            write_atomic(path, json.dumps({"spec": spec.identity()}) + "\n")
        log(f"{path}: labelling {len(todo)} game(s) ({len(done)} stored), {spec.points} "
            f"decisions x {spec.candidates} moves each, to turn {spec.turns}, "
            + (f"{workers} process(es)" if executor is None else "on the Dask cluster"))
        bar = tqdm(total=spec.games, initial=len(done & set(range(spec.games))), unit="game",
                   disable=not progress)

        def keep(game: dict) -> None:
            games.append(game)
            bar.update(1)

        store = JsonLinesStore(path, stored=len(games), check=_check_line, on_row=keep,
                               describe=lambda job: f"labelled game {job[1]}")
        local = local_executor(min(workers, len(todo))) if executor is None else \
            nullcontext(executor)
        try:
            with local as games_on:
                run_jobs([(spec, i) for i in todo], _job, store, games_on,
                         max_in_flight=max_in_flight or workers)
        finally:
            bar.close()
    return sorted((g for g in games if g["index"] < spec.games), key=lambda g: g["index"])
