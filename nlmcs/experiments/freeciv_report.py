"""A real FreeCiv game turn by turn, for both players, and what became of every order we sent
(the diagnosis `nlmcs freeciv play --out` writes).

Per turn and player: cities, citizens, units by type, the server's score; for us also techs,
the explored share of the map and the score's parts by FreeCiv 3.0's formula (citizens, 2 per
tech, 5 per wonder; what is left, `score_other`, is what FreeCiv adds besides: units built and
killed, culture; and a lag: the server scores at the turn's start, before what happens then, such
as an explorer's hut, so the rest may even be negative). Of the AI we know what a player sees:
its cities and units in sight (`seen_` columns), its score only where the server shows it
(not without an embassy: it sends 0), and FreeCiv's final scores at the end (`final_score`, on
each player's last row).

Every request we send is an `Order`; what the server said while processing it (its event
messages) is kept with it, and as soon as the server has processed it the order is judged from
the view: carried out, refused (with the server's words, when it gave any), unfinished (a goto
still under way) or its unit lost. Units that disappear from one turn to the next are losses,
with the server's messages of that turn that tell how (`UNIT_LOSS_EVENTS`); a settler that
founded a city is no loss.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from nlmcs.games.freeciv.client import View
from nlmcs.games.freeciv.constants import ENUMS
from nlmcs.games.freeciv.translate import rule_name

EVENT_NAMES = {ENUMS[k]: k for k in ("E_CITY_LOST", "E_UNIT_LOST_ATT", "E_UNIT_LOST_DEF",
                                     "E_UNIT_ORDERS", "E_BAD_COMMAND", "E_UNIT_LOST_MISC",
                                     "E_UNIT_ILLEGAL_ACTION")}
"""The events the report names (others are kept by number)."""
UNIT_LOSS_EVENTS = {ENUMS["E_UNIT_LOST_ATT"], ENUMS["E_UNIT_LOST_DEF"],
                    ENUMS["E_UNIT_LOST_MISC"], ENUMS["E_CITY_LOST"]}
REFUSAL_EVENTS = {ENUMS["E_BAD_COMMAND"], ENUMS["E_UNIT_ILLEGAL_ACTION"],
                  ENUMS["E_UNIT_ORDERS"]}
OUTCOMES = ("carried out", "refused", "unfinished", "unit lost")
_MARKUP = re.compile(r"\[/?[a-z]+[^\]]*\]")


def plain(message: str) -> str:
    """A server message without FreeCiv's markup ([c fg=...], [l tgt=... name="X" /])."""
    text = re.sub(r'\[l [^\]]*name="([^"]*)"[^\]]*/\]', r"\1", message)
    return " ".join(_MARKUP.sub("", text).split())


def said(messages: list[dict]) -> str:
    """Server messages as one cell: "EVENT: text; ..." (events by name where the report knows
    them)."""
    return "; ".join(f"{EVENT_NAMES.get(m.get('event'), m.get('event'))}: "
                     f"{plain(str(m.get('message', '')))}" for m in messages)


def known_techs(view: View) -> int:
    """Techs we know (FreeCiv's inventions string, without A_NONE)."""
    research = next(iter(view.research.values()), {})
    inventions = str(research.get("inventions", ""))
    return sum(1 for i, ch in enumerate(inventions) if i > 0 and ch == str(ENUMS["TECH_KNOWN"]))


def explored_share(view: View) -> float:
    info = view.latest.get("PACKET_MAP_INFO", {})
    n = int(info.get("xsize", 0)) * int(info.get("ysize", 0))
    seen = sum(1 for t in view.tiles.values() if t.get("known", 0) != ENUMS["TILE_UNKNOWN"])
    return round(seen / n, 4) if n else 0.0


def _wonders(view: View, cities: list[dict]) -> int:
    great = {i for i, b in view.buildings.items() if b.get("genus") == ENUMS["IG_GREAT_WONDER"]}
    count = 0
    for c in cities:
        bits = c.get("improvements")
        if isinstance(bits, bytes | bytearray):
            count += sum(1 for i in great if i // 8 < len(bits) and bits[i // 8] >> (i % 8) & 1)
    return count


def player_row(view: View, pid: int, turn: int) -> dict:
    """One player's line of the turn table, as far as we see it."""
    me = pid == view.player_id
    cities = [c for c in view.cities.values() if c.get("owner") == pid]
    units = [u for u in view.units.values() if u.get("owner") == pid]
    types = Counter(rule_name(view.unit_types.get(u.get("type"), {})) for u in units)
    score = int(view.players.get(pid, {}).get("score", 0))
    if not me and score == 0:
        score = None  # the server shows another player's score as 0 when we may not see it
    prefix = "" if me else "seen_"
    row = {"turn": turn, "player": "us" if me else "ai", "playerno": pid, "score": score,
           f"{prefix}cities": len(cities),
           f"{prefix}citizens": sum(int(c.get("size", 0)) for c in cities),
           f"{prefix}units": len(units),
           f"{prefix}units_by_type": " ".join(f"{k}:{v}" for k, v in sorted(types.items()))}
    if me:
        techs, wonders = known_techs(view), _wonders(view, cities)
        parts = {"score_citizens": row["citizens"], "score_techs": 2 * techs,
                 "score_wonders": 5 * wonders}
        row.update({"techs": techs, "explored": explored_share(view), **parts,
                    "score_other": score - sum(parts.values()),
                    "gold": int(view.players.get(pid, {}).get("gold", 0))})
    return row


@dataclass
class Order:
    """One request we sent, and what became of it."""

    turn: int
    packet: str
    agent: str
    detail: str
    fields: dict = field(repr=False)
    outcome: str = ""
    said: str = ""
    objected: bool = False  # the server answered it with a refusal event (`REFUSAL_EVENTS`)

    def row(self) -> dict:
        return {"turn": self.turn, "agent": self.agent, "order": self.detail,
                "outcome": self.outcome, "server_said": self.said}


def describe(packet: str, fields: dict, view: View) -> tuple[str, str]:
    """(agent, what the order asks) in words."""
    if packet == "PACKET_UNIT_ORDERS":
        return f"unit:{fields['unit_id']}", f"move {fields['length']} to tile {fields['dest_tile']}"
    if packet == "PACKET_UNIT_DO_ACTION":
        what = "found city" if fields["action_type"] == ENUMS["ACTION_FOUND_CITY"] else "attack"
        return f"unit:{fields['actor_id']}", f"{what} at tile {fields['target_id']}"
    if packet == "PACKET_UNIT_CHANGE_ACTIVITY":
        return f"unit:{fields['unit_id']}", f"activity {ACTIVITY_NAMES.get(fields['activity'])}"
    if packet == "PACKET_UNIT_AUTOSETTLERS":
        return f"unit:{fields['unit_id']}", "auto-worker"
    if packet == "PACKET_CITY_CHANGE":
        table = view.unit_types if fields["production_kind"] == ENUMS["VUT_UTYPE"] else \
            view.buildings
        name = rule_name(table.get(fields["production_value"], {}))
        return f"city:{fields['city_id']}", f"build {name}"
    if packet == "PACKET_PLAYER_RESEARCH":
        return "civ", f"research {rule_name(view.techs.get(fields['tech'], {}))}"
    if packet == "PACKET_PLAYER_TECH_GOAL":
        return "civ", f"goal {rule_name(view.techs.get(fields['tech'], {}))}"
    if packet == "PACKET_PLAYER_CHANGE_GOVERNMENT":
        return "civ", f"revolution to {rule_name(view.governments.get(fields['government'], {}))}"
    if packet == "PACKET_PLAYER_RATES":
        return "civ", f"rates science {fields['science']} tax {fields['tax']}"
    return "", packet


ACTIVITY_NAMES = {ENUMS[k]: k.removeprefix("ACTIVITY_").lower() for k in
                  ("ACTIVITY_IDLE", "ACTIVITY_MINE", "ACTIVITY_IRRIGATE", "ACTIVITY_FORTIFIED",
                   "ACTIVITY_SENTRY", "ACTIVITY_EXPLORE", "ACTIVITY_FORTIFYING",
                   "ACTIVITY_GEN_ROAD")}


def judge(order: Order, view: View) -> str:
    """Carried out, refused, unfinished or unit lost, from the view once the server has
    processed the order."""
    f, packet = order.fields, order.packet
    if packet == "PACKET_UNIT_AUTOSETTLERS":
        unit = view.units.get(f["unit_id"])
        return "unit lost" if unit is None else ("carried out" if unit.get("ai") else "refused")
    if packet in ("PACKET_UNIT_ORDERS", "PACKET_UNIT_CHANGE_ACTIVITY", "PACKET_UNIT_DO_ACTION"):
        uid = f.get("unit_id", f.get("actor_id"))
        unit = view.units.get(uid)
        if packet == "PACKET_UNIT_DO_ACTION" and f["action_type"] == ENUMS["ACTION_FOUND_CITY"]:
            founded = any(c.get("tile") == f["target_id"] and c.get("owner") == view.player_id
                          for c in view.cities.values())
            return "carried out" if founded else "refused"
        if unit is None:
            return "unit lost"
        if packet == "PACKET_UNIT_ORDERS":
            if unit.get("tile") == f["dest_tile"]:
                return "carried out"
            if unit.get("tile") != f["src_tile"] or unit.get("has_orders"):
                return "unfinished"
            return "refused"
        if packet == "PACKET_UNIT_CHANGE_ACTIVITY":
            wanted = f["activity"]
            now = unit.get("activity")
            fortified = wanted == ENUMS["ACTIVITY_FORTIFYING"] and now == ENUMS[
                "ACTIVITY_FORTIFIED"]
            # exploring until nothing reachable is left unseen: the server takes the order, the
            # unit explores what it can and stands idle again, saying nothing
            explored = wanted == ENUMS["ACTIVITY_EXPLORE"] and now == ENUMS[
                "ACTIVITY_IDLE"] and not order.objected
            return "carried out" if now == wanted or fortified or explored else "refused"
        # an attack: the server tells its end, a refusal by its event
        return "carried out" if order.said and not order.objected else "refused"
    if packet == "PACKET_CITY_CHANGE":
        city = view.cities.get(f["city_id"], {})
        same = (city.get("production_kind"), city.get("production_value")) == (
            f["production_kind"], f["production_value"])
        return "carried out" if same else "refused"
    research = next(iter(view.research.values()), {})
    me = view.players.get(view.player_id, {})
    if packet == "PACKET_PLAYER_RESEARCH":
        return "carried out" if research.get("researching") == f["tech"] else "refused"
    if packet == "PACKET_PLAYER_TECH_GOAL":
        return "carried out" if research.get("tech_goal") == f["tech"] else "refused"
    if packet == "PACKET_PLAYER_CHANGE_GOVERNMENT":
        return "carried out" if f["government"] in (me.get("government"),
                                                    me.get("target_government")) else "refused"
    if packet == "PACKET_PLAYER_RATES":
        return "carried out" if me.get("science") == f["science"] else "refused"
    return "carried out"


LOSS_COLUMNS = ("turn", "unit", "type", "server_said")
"""A row of `Ledger.losses` (losses.csv)."""


@dataclass
class Ledger:
    """The orders of a game and the units it lost."""

    orders: list[Order] = field(default_factory=list)
    losses: list[dict] = field(default_factory=list)
    _units: dict[int, str] = field(default_factory=dict)  # our units at the last turn start
    _seen: int = 0  # messages already read
    _lost: list[dict] = field(default_factory=list)  # loss messages since the last turn start

    def new_messages(self, view: View) -> list[dict]:
        """Messages since the last read; a loss message is also kept for the turn's losses,
        whichever order's processing it came with."""
        out = view.messages[self._seen:]
        self._seen = len(view.messages)
        self._lost += [m for m in out if m.get("event") in UNIT_LOSS_EVENTS]
        return out

    def start_turn(self, view: View, turn: int) -> None:
        """Our units now against the last turn's: the missing ones were lost, unless they
        founded a city; each with the loss message naming its type, if one does. A unit
        message left over (a unit built and lost between two turn starts) is a loss of its own."""
        self.new_messages(view)
        ours = {uid: rule_name(view.unit_types.get(u.get("type"), {}))
                for uid, u in view.units.items() if u.get("owner") == view.player_id}
        founders = {o.fields.get("actor_id") for o in self.orders if o.turn == turn - 1
                    and o.detail.startswith("found city") and o.outcome == "carried out"}
        gone = [uid for uid in self._units if uid not in ours and uid not in founders]
        pending, self._lost = self._lost, []
        for uid in gone:
            kind = self._units[uid]
            mine = next((m for m in pending if m.get("event") != ENUMS["E_CITY_LOST"] and kind
                         and kind in plain(str(m.get("message", ""))).lower()), None)
            if mine is not None:
                pending.remove(mine)
            self.losses.append({"turn": turn - 1, "unit": uid, "type": kind,
                                "server_said": said([mine]) if mine else "no message"})
        self.losses += [{"turn": turn - 1, "unit": None, "type": "not seen at a turn start",
                         "server_said": said([m])} for m in pending
                        if m.get("event") != ENUMS["E_CITY_LOST"]]
        self._units = ours

    def sent(self, view: View, turn: int, packet: str, fields: dict) -> Order:
        """Record an order the server has just processed (its messages read since it was
        sent)."""
        agent, detail = describe(packet, fields, view)
        order = Order(turn, packet, agent, detail, dict(fields))
        messages = self.new_messages(view)
        order.said = said(messages)
        order.objected = any(m.get("event") in REFUSAL_EVENTS for m in messages)
        order.outcome = judge(order, view)
        self.orders.append(order)
        return order

    def outcomes(self) -> list[dict]:
        """Orders by kind (the order's first word) and outcome."""
        table: dict[str, Counter] = {}
        for o in self.orders:
            table.setdefault(o.detail.split()[0], Counter())[o.outcome] += 1
        return [{"order": k, **{x: c.get(x, 0) for x in OUTCOMES}} for k, c in sorted(
            table.items())]

    def refusals(self, top: int = 10) -> list[tuple[str, int]]:
        """The commonest things the server said about orders it refused."""
        return Counter(f"{o.detail.split()[0]}: {o.said or 'no message'}" for o in self.orders
                       if o.outcome == "refused").most_common(top)
