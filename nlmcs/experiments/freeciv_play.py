"""One game of our planner against FreeCiv's own AI on a real `freeciv-server` (library side of
`nlmcs freeciv play`).

Every turn: translate what the server shows us (`nlmcs.games.freeciv.translate`; fog of war,
as a player sees it), let the planner choose on that state in our engine, send the choice as
orders (`nlmcs.games.freeciv.orders`), and end the turn. The rules-gap report compares, turn by
turn, what our engine predicted 1, 5 and 10 turns before (our moves as made, the other players
moved by our built-in AI; `HORIZONS`) with what the server then shows: our units, cities,
citizens, food and shield stocks, bulbs and techs. Fairness: we see what FreeCiv sends a
player; no observer connection, no savegame reading.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nlmcs.experiments.freeciv_report import LOSS_COLUMNS, Ledger, player_row
from nlmcs.experiments.play import game_record, log_line, manual_label
from nlmcs.experiments.relevance.log import END
from nlmcs.files import AtomicFile, write_atomic, write_csv_rows
from nlmcs.games.civ.state import CivState
from nlmcs.games.freeciv.client import Client
from nlmcs.games.freeciv.codec import ProtocolError
from nlmcs.games.freeciv.orders import SCIENCE_RATES, fixed_rules, requests, science_rates
from nlmcs.games.freeciv.packets_def import Protocol
from nlmcs.games.freeciv.server import FreeCivServer, ServerConfig
from nlmcs.games.freeciv.translate import UNKNOWN_GAP, translate
from nlmcs.methods import make_planner
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig

GAP_MEASURES = ("units", "cities", "citizens", "food", "shields", "bulbs", "techs")
HORIZONS = (1, 5, 10)
"""Turns ahead our engine's prediction is compared with the server's: from the state h turns
back, our moves as we made them (those still legal in the prediction), every other player
moved by our built-in AI; so the gap is the rules' and the opponents' model's, not a guess at
our own policy."""


def measures(state: CivState, player: int = 0) -> dict[str, int]:
    """What the rules-gap report compares, for one player of a state."""
    cities = [c for c in state.cities.values() if c.owner == player]
    p = state.players[player]
    return {
        "units": sum(1 for u in state.units.values() if u.owner == player),
        "cities": len(cities), "citizens": sum(c.size for c in cities),
        "food": sum(c.food for c in cities), "shields": sum(c.shields for c in cities),
        "bulbs": p.bulbs, "techs": bin(p.techs).count("1"),
    }  # fmt: skip


@dataclass
class FreeCivGame:
    turns: list[dict] = field(default_factory=list)  # one row per turn played
    gaps: Counter = field(default_factory=Counter)  # translation gaps, summed over turns
    result: dict = field(default_factory=dict)
    players: list[dict] = field(default_factory=list)  # a row per turn and player (diagnosis)
    ledger: Ledger = field(default_factory=Ledger)  # every order and what became of it


def play_freeciv(*, proto: Protocol, server: ServerConfig, method: str, turns: int, seed: int,
                 search_config: SearchConfig | None = None,
                 model_config: ModelConfig | None = None, manual=None,
                 out: Path | None = None, log_decisions: Path | None = None,
                 username: str = "nlmcs", log: Callable[[str], None] = print) -> FreeCivGame:
    """Play `turns` turns; with `out` (a folder), write turns.csv, gaps.csv and summary.md;
    with `log_decisions`, the decision log of `nlmcs play`: a game record first (our engine's
    translation of the first turn, the manual, configurations and the server's settings), every
    decision record of the planner, and an end record when the game ends normally."""
    game_out = FreeCivGame()
    search_config = dataclasses.replace(search_config or SearchConfig(),
                                        log_decisions=log_decisions is not None)
    decisions = None
    rng = np.random.default_rng(np.random.SeedSequence([seed, 7]))
    ahead_rng = np.random.default_rng(np.random.SeedSequence([seed, 8]))  # longer horizons
    planner = civ = None
    predicted: dict[int, dict[int, dict]] = {}  # turn -> horizon -> measures predicted
    history: dict[int, tuple[CivState, dict]] = {}  # turn -> (its state, our move), 10 kept
    rated = None  # the government our science rate was last set for
    t0 = time.perf_counter()
    try:
        with FreeCivServer(server) as srv, Client.connect(proto, "127.0.0.1", srv.port) as client:
            client.join(username)
            srv.command("start")
            view = client.view
            try:
                if log_decisions is not None:
                    decisions = AtomicFile(log_decisions)
                final: dict[int, int] = {}
                destroyed = False
                while len(game_out.turns) < turns:
                    name, values = next_turn(client)
                    if name == "PACKET_ENDGAME_REPORT":  # over before the turn limit (conquest)
                        final = _final_scores(client, values)
                        break
                    if name == DESTROYED:  # the game goes on without us: a loss
                        break
                    tr = translate(view, max_turns=server.end_turn, game=civ)
                    if tr.state.game is not civ:  # first turn, or the players changed
                        if planner is not None:
                            planner.close()
                        civ = tr.state.game
                        planner = make_planner(method, game=civ, manual=manual, seed=seed,
                                               search_config=search_config,
                                               model_config=model_config)  # fmt: skip
                        if decisions is not None and not game_out.turns:
                            decisions.file.write(log_line(_log_header(
                                civ, method=method, seed=seed, turns=turns, server=server,
                                manual=manual, search_config=search_config,
                                model_config=model_config)))  # fmt: skip
                    seen = measures(tr.state)
                    row = {"turn": view.turn, **seen}
                    for k, then in sorted(predicted.pop(view.turn, {}).items()):
                        row.update({f"{_prefix(k)}{m}": then[m] for m in GAP_MEASURES})
                    game_out.ledger.start_turn(view, view.turn)
                    game_out.players += [player_row(view, p, view.turn) for p in _players(view)]
                    step0 = time.perf_counter()
                    joint = planner.choose(tr.state, 0, rng)
                    row["seconds"] = round(time.perf_counter() - step0, 3)
                    if decisions is not None:
                        for rec in planner.last_log:
                            decisions.file.write(log_line({**rec, "freeciv_turn": view.turn}))
                    sent = []
                    for packet, fields in requests(tr, view, joint, rng) + fixed_rules(tr, view):
                        if _dead(view):  # lost our last unit to the AI's moves of this turn
                            break
                        client.send(packet, **fields)
                        client.receive_until({"PACKET_PROCESSING_FINISHED"})
                        sent.append((packet, fields))
                        game_out.ledger.sent(view, view.turn, packet, fields)
                    government = view.players.get(view.player_id, {}).get("government")
                    if government != rated and not _dead(view):  # each government its own rate
                        rated = government
                        for science in SCIENCE_RATES:
                            packet, fields = science_rates(science)
                            client.send(packet, **fields)
                            client.receive_until({"PACKET_PROCESSING_FINISHED"})
                            sent.append((packet, fields))
                            if game_out.ledger.sent(view, view.turn, packet,
                                                    fields).outcome == "carried out":
                                break
                    sim = _predict(tr.state, joint, rng)
                    predicted.setdefault(view.turn + 1, {})[1] = measures(sim)
                    history[view.turn] = (tr.state.clone(), joint)
                    history.pop(view.turn - max(HORIZONS), None)
                    for h in HORIZONS[1:]:
                        if view.turn + 1 - h in history:
                            predicted.setdefault(view.turn + 1, {})[h] = measures(
                                _replay(history, view.turn + 1 - h, view.turn, ahead_rng))
                    me = view.players.get(view.player_id, {})
                    row.update({"orders": len(sent), "score": me.get("score", 0),
                                "unknown_tiles": tr.gaps.get(UNKNOWN_GAP, 0)})
                    game_out.gaps.update(tr.gaps)
                    game_out.turns.append(row)
                    log(f"turn {row['turn']}: {seen['units']} units, {seen['cities']} cities, "
                        f"score {row['score']}, {len(sent)} orders, {row['seconds']:.1f} s")
                    if not _dead(view):  # a dead player's "done" is refused; no turn follows
                        client.send("PACKET_PLAYER_PHASE_DONE", turn=view.turn)
                if not final and _dead(view):  # between turns or in the last turn played
                    destroyed = True
                    final = scores_after_our_end(srv, client)
                if not final and not destroyed and server.end_turn == len(game_out.turns):
                    _, report = client.receive_until({"PACKET_ENDGAME_REPORT"})
                    final = _final_scores(client, report)
                game_out.result = _result(
                    game_out, final=final, destroyed=destroyed, me=view.player_id,
                    method=method, seed=seed, server=server, seconds=time.perf_counter() - t0)
                last = {r["playerno"]: r for r in game_out.players}  # each player's last row
                for pid, score in final.items():
                    if pid in last:
                        last[pid]["final_score"] = score
                if decisions is not None:
                    decisions.file.write(log_line(_end_record(game_out.result)))
            finally:
                if planner is not None:
                    planner.close()
                if decisions is not None:
                    decisions.commit()  # the turns played so far are kept, whatever ended the game
    except BaseException as error:  # a lost server or connection: what was played is kept
        if out is not None and game_out.turns:
            game_out.result = {**_result(game_out, final={}, destroyed=False, me=-1,
                                         method=method, seed=seed, server=server,
                                         seconds=time.perf_counter() - t0),
                               "stopped": f"{type(error).__name__}: {error}"}
            write_results(game_out, out)
        raise
    if out is not None:
        write_results(game_out, out)
    return game_out


DESTROYED = "destroyed"
"""What `next_turn` returns once our player is dead."""


def _dead(view) -> bool:
    return not view.players.get(view.player_id, {}).get("is_alive", True)


def next_turn(client) -> tuple[str, dict]:
    """The packet our loop acts on: the next turn's start (`PACKET_BEGIN_TURN`), the end of the
    game (`PACKET_ENDGAME_REPORT`), or (`DESTROYED`, {}) as soon as the server says our player is
    dead, whenever that comes: the server starts no more turns for a dead player (it refuses
    its "turn done"), so waiting for one would wait for ever."""
    while not _dead(client.view):
        name, values = client.receive()
        if name == "PACKET_ENDGAME_REPORT" or (name == "PACKET_BEGIN_TURN"
                                                and not _dead(client.view)):
            return name, values
    return DESTROYED, {}


def scores_after_our_end(srv, client) -> dict[int, int]:
    """FreeCiv's final scores of a game we were destroyed in. The server starts no turn while
    no living human player is connected, so its console tells it to play the AIs' turns on
    without waiting (`timeout -1`, its autogame) to the game's end, whose report has the
    scores; a destroyed game's margin is then the AI's real lead, not 0 ({}: a loss with the
    scores unknown, should the server stay silent)."""
    srv.command("set timeout -1")
    try:
        _, report = client.receive_until({"PACKET_ENDGAME_REPORT"})
        return _final_scores(client, report)
    except ProtocolError:
        return {}


def _result(game_out: FreeCivGame, *, final: dict[int, int], destroyed: bool, me: int,
            method: str, seed: int, server: ServerConfig, seconds: float) -> dict:
    others = [s for p, s in final.items() if p != me]
    best = max(others, default=None)
    winner = None
    if destroyed:  # a loss, to the best of the others when their scores are known
        winner = 1 + others.index(best) if best is not None else 1
    elif final and best is not None and final.get(me, 0) != best:
        winner = 0 if final.get(me, 0) > best else 1 + others.index(best)
    return {
        "method": method, "seed": seed, "turns": len(game_out.turns),
        "ai_level": server.ai_level, "ai_players": server.ai_players,
        "finished": bool(final) or destroyed, "winner": winner, "destroyed": destroyed,
        "scores": [final.get(me, 0), *others] if final else [],
        "our_score": final.get(me), "best_other_score": best,
        "seconds": round(seconds, 1),
        "seconds_per_turn": [t["seconds"] for t in game_out.turns],
    }  # fmt: skip


def _log_header(civ, *, method: str, seed: int, turns: int, server: ServerConfig, manual,
                search_config: SearchConfig, model_config: ModelConfig | None) -> dict:
    """The decision log's game record: the game is our engine's translation of the first turn."""
    return game_record(civ, method=method, opponent=f"freeciv-{server.ai_level}", seed=seed,
                       steps=turns, extra={
                           "manual": manual_label(method, manual),
                           "search": search_config.to_dict(),
                           "model": (model_config or ModelConfig()).to_dict(),
                           "freeciv": {"ai_level": server.ai_level,
                                       "ai_players": server.ai_players, "xsize": server.xsize,
                                       "ysize": server.ysize, "seed": server.seed}})  # fmt: skip


def _end_record(result: dict) -> dict:
    """The decision log's last record, with the fields `nlmcs play` writes there."""
    sec = result["seconds_per_turn"]
    return {"record": END, "method": result["method"], "seed": result["seed"],
            "steps": result["turns"], "finished": result["finished"],
            "winner": result["winner"], "scores": result["scores"],
            "mean_seconds_per_step": round(float(np.mean(sec)), 3) if sec else None}


def _final_scores(client: Client, report: dict) -> dict[int, int]:
    """FreeCiv's final score of every player (not barbarians), sent after the end-of-game
    `report`; the winner is then the highest score, as in our engine."""
    scores = {}
    while len(scores) < report["player_num"]:
        _, row = client.receive_until({"PACKET_ENDGAME_PLAYER"})
        scores[row["player_id"]] = row["score"]
    return scores


def _players(view) -> list[int]:
    """Us first, then every other player alive (not barbarians)."""
    others = sorted(p for p, row in view.players.items() if p != view.player_id
                    and row.get("is_alive") and not row.get("barbarian_type"))
    return [view.player_id, *others]


def _prefix(horizon: int) -> str:
    return "predicted_" if horizon == 1 else f"predicted{horizon}_"


def _predict(state: CivState, joint: dict | None, rng) -> CivState:
    """Our engine's next turn: our move (None: our built-in AI's), every other player moved
    by our built-in AI."""
    sim = state.clone()
    ai = state.game.policy("builtin")
    moves = {p: ai.joint_action(sim, p, rng) for p in range(joint is not None, sim.num_players)}
    if joint is not None:
        moves = {0: joint, **moves}
    sim.apply_joint_actions(moves, rng)
    return sim


def _replay(history: dict[int, tuple[CivState, dict]], first: int, last: int, rng
            ) -> CivState:
    """Our engine from turn `first`'s state through turn `last`: each turn our move as we made
    it, less what the predicted state does not allow (a unit it lost, a move now illegal)."""
    sim = history[first][0]
    for turn in range(first, last + 1):
        made = history[turn][1] if turn in history else {}
        joint = {agent: made[agent] for agent, actions in sim.agent_actions(0)
                 if agent in made and made[agent] in actions}
        sim = _predict(sim, joint, rng)
    return sim


def gap_table(turns: list[dict]) -> list[dict]:
    """Per horizon and measure: turns compared, mean predicted, mean seen and mean absolute
    error."""
    out = []
    for h in HORIZONS:
        for k in GAP_MEASURES:
            name = f"{_prefix(h)}{k}"
            pairs = [(r[name], r[k]) for r in turns if r.get(name) is not None]
            if pairs:
                pred, seen = np.array(pairs, float).T
                out.append({"horizon": h, "measure": k, "turns": len(pairs),
                            "predicted": round(pred.mean(), 2), "seen": round(seen.mean(), 2),
                            "mean_abs_error": round(float(np.abs(pred - seen).mean()), 2)})
    return out


REPORT_FILES = ("turns.csv", "gaps.csv", "players.csv", "orders.csv", "losses.csv",
                "players.png", "summary.md")
"""What `write_results` writes into a game's folder."""


def write_results(game: FreeCivGame, out: Path) -> None:
    """The game's diagnosis: per-turn rows (ours with the engine's predictions; both players),
    every order and what became of it, the units lost, a plot of both players, a summary."""
    out.mkdir(parents=True, exist_ok=True)
    write_csv_rows(out / "turns.csv", game.turns)
    write_csv_rows(out / "gaps.csv", gap_table(game.turns))
    write_csv_rows(out / "players.csv", game.players)
    write_csv_rows(out / "orders.csv", [o.row() for o in game.ledger.orders])
    write_csv_rows(out / "losses.csv", game.ledger.losses, LOSS_COLUMNS)
    plot_players(game.players, out / "players.png")
    r = game.result
    last = {row["player"]: row for row in game.players}  # each player's last turn
    us, ai = last.get("us", {}), last.get("ai", {})
    lines = [f"# FreeCiv game: {r['method']} vs FreeCiv's AI ({r['ai_level']}), seed {r['seed']}",
             "", "Played as a player (fog of war); no observer connection, no savegame reading.",
             "", f"Turns {r['turns']}; final scores (FreeCiv's, "
             f"{'when we were destroyed' if r.get('destroyed') else 'at the turn limit'}): ours "
             f"{r['our_score']}, best other {r['best_other_score']}; {r['seconds']} s.", "",
             *([f"**Stopped early** ({r['stopped']}): the turns played so far.", ""]
               if r.get("stopped") else []),
             "## The last turn, both players (players.csv, players.png)", "",
             "| | score | cities | citizens | units | techs | explored |",
             "|---|---:|---:|---:|---:|---:|---:|",
             f"| us | {us.get('final_score', us.get('score'))} | {us.get('cities')} | "
             f"{us.get('citizens')} | "
             f"{us.get('units')} | {us.get('techs')} | {us.get('explored')} |",
             f"| FreeCiv's AI (what we see) | {ai.get('final_score', ai.get('score'))} | "
             f"{ai.get('seen_cities')} | "
             f"{ai.get('seen_citizens')} | {ai.get('seen_units')} | | |", "",
             f"Our score's parts (FreeCiv 3.0's formula): citizens {us.get('score_citizens')}, "
             f"techs x 2 {us.get('score_techs')}, wonders x 5 {us.get('score_wonders')}, other "
             f"(units built and killed, culture, and the lag of a score taken at the turn's "
             f"start) {us.get('score_other')}.", "",
             "## Our orders and what the server did with them (orders.csv)", "",
             "| order | carried out | refused | unfinished | unit lost |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    lines += [f"| {o['order']} | {o['carried out']} | {o['refused']} | {o['unfinished']} | "
              f"{o['unit lost']} |" for o in game.ledger.outcomes()]
    refusals = game.ledger.refusals()
    if refusals:
        lines += ["", "The commonest refusals, with what the server said:", ""]
        lines += [f"- {text} ({n})" for text, n in refusals]
    lost = Counter(loss["type"] for loss in game.ledger.losses)
    lines += ["", f"Units lost (losses.csv): {sum(lost.values())}"
              + (" (" + ", ".join(f"{k} {v}" for k, v in lost.most_common()) + ")" if lost
                 else ""), "",
              "## Rules gap (our engine's prediction vs what the server showed, 1, 5 and 10 "
              "turns ahead)", "",
              "| horizon | measure | turns | predicted | seen | mean abs error |",
              "|---:|---|---:|---:|---:|---:|"]
    lines += [f"| {g['horizon']} | {g['measure']} | {g['turns']} | {g['predicted']} | "
              f"{g['seen']} | {g['mean_abs_error']} |" for g in gap_table(game.turns)]
    lines += ["", "## What did not map (summed over turns)", "", "| what | count |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in game.gaps.most_common()]
    write_atomic(out / "summary.md", "\n".join(lines) + "\n")


def plot_players(rows: list[dict], path: Path) -> None:
    """Both players' curves over the game: score, cities, citizens, units (the AI's as we see
    them), and our techs and explored share."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nlmcs.files import atomic_output

    panels = (("score (FreeCiv's final: x)", "score", "score"), ("cities", "cities", "seen_cities"),
              ("citizens", "citizens", "seen_citizens"), ("units", "units", "seen_units"),
              ("techs", "techs", None), ("explored share", "explored", None))
    fig, axes = plt.subplots(2, 3, figsize=(10, 5.4))
    for ax, (title, ours, theirs) in zip(axes.flat, panels, strict=True):
        for who, key, style in (("us", ours, "-"), ("ai", theirs, "--")):
            pts = [(r["turn"], r[key]) for r in rows if r["player"] == who and key
                   and r.get(key) is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), style, label="us" if who == "us" else
                        "FreeCiv's AI" + ("" if key == "score" else " (seen)"))
            if key == "score":  # the final scores, the AI's the first we may see
                ends = [(r["turn"], r["final_score"]) for r in rows if r["player"] == who
                        and r.get("final_score") is not None]
                if ends:
                    ax.plot(*zip(*ends, strict=True), "x", ms=8,
                            color="C0" if who == "us" else "C1")
        ax.set_title(title, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    fig.supxlabel("turn", fontsize=9)
    fig.tight_layout()
    with atomic_output(path, binary=True) as fh:
        fig.savefig(fh, format="png", dpi=90)
    plt.close(fig)
