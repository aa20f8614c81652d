"""Our planner's joint move, as FreeCiv requests (packet name, fields).

- `move` in a direction: as many single steps as our engine moves the unit on a copy of the
  translated state (`ORDER_MOVE` orders, one per tile); `attack`: the attack action on the tile;
- `build_city`: the found-city action; `irrigate`, `mine`, `build_road`, `fortify`: the matching
  activity (with its extra as the target); `wait`: nothing;
- a city's `build`: its production (unit or building, by name); the civilization's `research`:
  the tech to research, by name.
Anything the server does not take is refused by it and shows in the next turn's view.
`fixed_rules` covers what our engine does not model, for every method alike: units it lacks
(explorers) explore; our workers work the land on FreeCiv's own auto-worker (the command a
human player gives them; our engine's rules for them knew no FreeCiv city's needs, and with it
our score rose in all six exploratory games, docs/freeciv.md), so no planner orders them; the
research goal is `GOAL` and, once it is known, a revolution changes the
government to it (FreeCiv's HOWTOPLAY: "as soon as you've researched a new government type,
start a revolution"; our engine has neither governments nor those techs, so until then its
research choices wait); `science_rates` asks for science as high as the government allows
(HOWTOPLAY again).
"""

from __future__ import annotations

import numpy as np

from nlmcs.games.base import Action, AgentId
from nlmcs.games.civ.legal import parse_agent
from nlmcs.games.freeciv.client import View
from nlmcs.games.freeciv.constants import ENUMS
from nlmcs.games.freeciv.translate import Translation, rule_name

# Our direction 0..7 (north, clockwise) as FreeCiv's enum direction8.
DIRECTIONS = tuple(ENUMS[f"DIR8_{d}"] for d in ("NORTH", "NORTHEAST", "EAST", "SOUTHEAST",
                                                 "SOUTH", "SOUTHWEST", "WEST", "NORTHWEST"))
ACTIVITIES = {"irrigate": ("ACTIVITY_IRRIGATE", "irrigation"), "mine": ("ACTIVITY_MINE", "mine"),
              "build_road": ("ACTIVITY_GEN_ROAD", "road"), "fortify": ("ACTIVITY_FORTIFYING", None)}
Request = tuple[str, dict]


def requests(tr: Translation, view: View, joint: dict[AgentId, Action],
             rng: np.random.Generator) -> list[Request]:
    """The requests that carry out `joint` (one player's agents) on the server."""
    out: list[Request] = []
    by_name = {kind: {rule_name(row): i for i, row in getattr(view, kind).items()}
               for kind in ("unit_types", "buildings", "techs", "extras")}
    automated = auto_workers(view)
    for agent, action in joint.items():
        kind, ident = parse_agent(agent)
        if kind == "unit" and ident in automated:
            continue  # FreeCiv's auto-worker runs it (`fixed_rules`)
        if kind == "unit" and ident in tr.state.units:
            out.extend(_unit(tr, agent, ident, action, by_name, rng))
        elif kind == "city" and action.kind == "build":
            name = str(action.arg)
            if name in by_name["unit_types"]:
                item = (ENUMS["VUT_UTYPE"], by_name["unit_types"][name])
            elif name in by_name["buildings"]:
                item = (ENUMS["VUT_IMPROVEMENT"], by_name["buildings"][name])
            else:
                continue
            out.append(("PACKET_CITY_CHANGE", {"city_id": ident, "production_kind": item[0],
                                               "production_value": item[1]}))  # fmt: skip
        elif (kind == "civ" and action.kind == "research" and action.arg in by_name["techs"]
              and goal_known(view)):  # until then the research goal leads (`fixed_rules`)
            out.append(("PACKET_PLAYER_RESEARCH", {"tech": by_name["techs"][action.arg]}))
    return out


AUTO_WORKERS = ("workers", "engineers")
"""Our unit types FreeCiv's auto-worker runs (not settlers: they found our cities)."""


def auto_workers(view: View) -> set[int]:
    """Our units of the `AUTO_WORKERS` types."""
    return {uid for uid, u in view.units.items() if u.get("owner") == view.player_id
            and rule_name(view.unit_types.get(u.get("type"), {})) in AUTO_WORKERS}


def goal_known(view: View) -> bool:
    """Whether we know `GOAL` (a ruleset without it has no goal: True)."""
    goal = next((i for i, row in view.techs.items() if rule_name(row) == GOAL), None)
    inventions = str(next(iter(view.research.values()), {}).get("inventions", ""))
    return goal is None or (goal < len(inventions)
                            and inventions[goal] == str(ENUMS["TECH_KNOWN"]))


GOAL = "monarchy"
"""The tech and government the real game's fixed rules aim for. HOWTOPLAY names The Republic
("some people go for Monarchy before"); within 100 turns the Republic was not reached (9-10
techs against 11-12 by turn 100, two games), Monarchy was by turn 52-65 and our scores rose in
five of six games (exploratory, docs/freeciv.md)."""
SCIENCE_RATES = (90, 80, 70, 60, 50)
"""Science rates asked for, highest first, until the government allows one (the rest tax)."""


def fixed_rules(tr: Translation, view: View) -> list[Request]:
    """Requests for what our engine does not model: our units of types it lacks (explorers)
    explore on the server's own rule while idle; the research goal and the government."""
    me, ours = view.player_id, set(tr.state.tables.unit_names)
    out = _government(view)
    out += [("PACKET_UNIT_AUTOSETTLERS", {"unit_id": uid}) for uid in sorted(auto_workers(view))
            if not view.units[uid].get("ai")]  # not yet on the auto-worker
    for uid, u in sorted(view.units.items()):
        kind = rule_name(view.unit_types.get(u.get("type"), {}))
        if (u.get("owner") == me and kind not in ours
                and u.get("activity") == ENUMS["ACTIVITY_IDLE"]):  # fmt: skip
            out.append(("PACKET_UNIT_CHANGE_ACTIVITY", {
                "unit_id": uid, "activity": ENUMS["ACTIVITY_EXPLORE"], "target": -1}))
    return out


def _government(view: View) -> list[Request]:
    """The research goal `GOAL` while it is unknown; a revolution to it once known (none while
    one is under way)."""
    goal = next((i for i, row in view.techs.items() if rule_name(row) == GOAL), None)
    if goal is None:
        return []
    if not goal_known(view):
        research = next(iter(view.research.values()), {})
        return [] if research.get("tech_goal") == goal else [
            ("PACKET_PLAYER_TECH_GOAL", {"tech": goal})]
    target = next((i for i, row in view.governments.items() if rule_name(row) == GOAL), None)
    me = view.players.get(view.player_id, {})
    if target is None or target in (me.get("government"), me.get("target_government")):
        return []
    return [("PACKET_PLAYER_CHANGE_GOVERNMENT", {"government": target})]


def science_rates(science: int) -> Request:
    """Science at `science` percent, the rest tax (no luxury)."""
    return ("PACKET_PLAYER_RATES", {"tax": 100 - science, "luxury": 0, "science": science})


def _unit(tr: Translation, agent: str, uid: int, action: Action, by_name: dict,
          rng) -> list[Request]:
    s = tr.state
    u = s.units[uid]
    if action.kind == "move":
        sim = s.clone()
        sim.apply_action(agent, action, rng)
        moved = sim.units.get(uid)
        if moved is None or moved.tile == u.tile:
            return []
        steps = s.map.dist(moved.tile, u.tile)
        d = DIRECTIONS[int(action.arg)]
        return [("PACKET_UNIT_ORDERS", {
            "unit_id": uid, "src_tile": u.tile, "length": steps, "repeat": False,
            "vigilant": False, "orders": [ENUMS["ORDER_MOVE"]] * steps, "dir": [d] * steps,
            "activity": [ENUMS["ACTIVITY_LAST"]] * steps, "sub_target": [-1] * steps,
            "action": [ENUMS["ACTION_NONE"]] * steps, "dest_tile": moved.tile,
        })]  # fmt: skip
    if action.kind == "attack":
        target = s.map.neighbors[u.tile][int(action.arg)]
        if target < 0:
            return []
        return [("PACKET_UNIT_DO_ACTION", {"actor_id": uid, "target_id": target, "sub_tgt_id": 0,
                                           "name": "", "action_type": ENUMS["ACTION_ATTACK"]})]
    if action.kind == "build_city":
        return [("PACKET_UNIT_DO_ACTION", {"actor_id": uid, "target_id": u.tile, "sub_tgt_id": 0,
                                           "name": f"nlmcs {uid}",
                                           "action_type": ENUMS["ACTION_FOUND_CITY"]})]
    if action.kind in ACTIVITIES:
        activity, extra = ACTIVITIES[action.kind]
        target = by_name["extras"].get(extra, -1) if extra else -1
        return [("PACKET_UNIT_CHANGE_ACTIVITY", {"unit_id": uid, "activity": ENUMS[activity],
                                                 "target": target})]
    return []  # wait

