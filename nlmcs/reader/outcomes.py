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
trained on the same ones. Labelling is resumable: `outcomes.jsonl` holds one fsynced line per
game; a line cut by a crash is played again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from nlmcs.errors import UserInputError
from nlmcs.seeds import game_seed

SALT = 0x7EAD
FORMAT = "nlmcs-reader-outcomes/1"


@dataclass(frozen=True)
class OutcomeSpec:
    games: int = 200
    seed: int = 0
    turns: int = 100
    """Game length: every candidate's game is played to this turn limit."""
    map: str = "small"
    opponent: str = "builtin"
    """Who plays: player 0 outside the tried move, and every other player."""
    points: int = 16
    """Decisions labelled per game: at a random turn, a random kind of agent of player 0
    (unit type, city, civilization), then one agent of that kind."""
    candidates: int = 4
    """Moves tried per decision (the AI's own and others at random)."""
    variant: str = ""

    def __post_init__(self) -> None:
        for name in ("games", "turns", "points"):
            if getattr(self, name) < 1:
                raise UserInputError(f"--{name} must be at least 1, got {getattr(self, name)}")
        if self.candidates < 2:
            raise UserInputError(f"--candidates must be at least 2, got {self.candidates}")
        if self.seed < 0:
            raise UserInputError(f"--seed must be 0 or more, got {self.seed}")

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

def read_outcomes(path: Path) -> tuple[dict | None, list[dict]]:
    """(header, game lines) of an outcomes file; a damaged line is one error naming it (a cut
    last line is dropped: its game is played again)."""
    from nlmcs.files import resumable_lines

    def accept(number: int, row: dict) -> bool:
        if number == 1 and "spec" in row:
            return True
        return row.get("format") == FORMAT and isinstance(row.get("rows"), list) and \
            isinstance(row.get("index"), int)

    lines = resumable_lines(path, accept, what="a labelled game",
                            again="its game will be played again")
    header = next((row for number, row in lines if number == 1 and "spec" in row), None)
    games = [row for number, row in lines if row is not header]
    if games and header is None:
        raise UserInputError(f"{path}: no header line; not an outcomes file")
    return header, games


def label_outcomes(spec: OutcomeSpec, path: Path, *, workers: int = 1, progress: bool = True,
                   log=print) -> list[dict]:
    """Label games 0..games-1 into `path` (those already there are kept); every game line."""
    from tqdm import tqdm

    from nlmcs.processes import local_pool

    path = Path(path)
    header, games = read_outcomes(path)
    if header is not None and header["spec"] != spec.identity():
        raise UserInputError(f"{path}: labelled with other settings; use another file")
    done = {g["index"] for g in games}
    todo = [i for i in range(spec.games) if i not in done]
    if not todo:
        return [g for g in games if g["index"] < spec.games]
    path.parent.mkdir(parents=True, exist_ok=True)
    if header is None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"spec": spec.identity()}) + "\n")
    else:
        _drop_cut_line(path)
    log(f"{path}: labelling {len(todo)} game(s) ({len(done)} stored), {spec.points} decisions "
        f"x {spec.candidates} moves each, to turn {spec.turns}, {workers} process(es)")
    bar = tqdm(total=spec.games, initial=len(done & set(range(spec.games))), unit="game",
               disable=not progress)
    with local_pool(workers) as pool, open(path, "a", encoding="utf-8") as fh:
        jobs = [(spec, i) for i in todo]
        results = pool.map(_job, jobs) if workers > 1 else map(_job, jobs)
        for g in results:
            fh.write(json.dumps(g) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            games.append(g)
            bar.update(1)
    bar.close()
    return sorted((g for g in games if g["index"] < spec.games), key=lambda g: g["index"])


def _drop_cut_line(path: Path) -> None:
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        from nlmcs.files import write_atomic

        write_atomic(path, data[:data.rfind(b"\n") + 1])
