"""The real game's diagnosis, judged from a player's view: what became of each order, which units
were lost and how, and each player's line (without a server: views made by hand)."""

from __future__ import annotations

from nlmcs.experiments.freeciv_report import Ledger, judge, plain, player_row, said
from nlmcs.games.freeciv.client import View
from nlmcs.games.freeciv.constants import ENUMS

ME, AI = 0, 1


def _view() -> View:
    v = View(player_id=ME)
    v.latest["PACKET_MAP_INFO"] = {"xsize": 4, "ysize": 2}
    v.unit_types = {0: {"name": "Settlers"}, 3: {"name": "Warriors"}}
    v.buildings = {0: {"name": "Pyramids", "genus": ENUMS["IG_GREAT_WONDER"]},
                   1: {"name": "Barracks", "genus": 2}}
    v.players = {ME: {"score": 12, "gold": 30}, AI: {"score": 20}}
    v.research = {0: {"inventions": "2" + "2" * 3 + "0" * 4, "researching": 7}}  # 3 techs
    v.tiles = {0: {"known": 2}, 1: {"known": 1}, 2: {"known": 0}}
    v.cities = {50: {"owner": ME, "tile": 1, "size": 3, "improvements": bytes([1]),
                     "production_kind": ENUMS["VUT_UTYPE"], "production_value": 3},
                51: {"owner": AI, "tile": 7, "size": 2}}
    v.units = {60: {"owner": ME, "type": 0, "tile": 5}, 61: {"owner": ME, "type": 3, "tile": 1},
               70: {"owner": AI, "type": 3, "tile": 6}}
    return v


def _move(uid, src, dest):
    return {"unit_id": uid, "src_tile": src, "dest_tile": dest, "length": 1}


def test_an_order_is_judged_from_what_the_server_then_shows():
    v = _view()
    from nlmcs.experiments.freeciv_report import Order

    def outcome(packet, fields, said_text=""):
        return judge(Order(1, packet, "", "", fields, said=said_text), v)

    assert outcome("PACKET_UNIT_ORDERS", _move(60, 4, 5)) == "carried out"
    assert outcome("PACKET_UNIT_ORDERS", _move(60, 5, 6)) == "refused"  # did not move
    v.units[60]["has_orders"] = True
    assert outcome("PACKET_UNIT_ORDERS", _move(60, 5, 9)) == "unfinished"  # a goto under way
    assert outcome("PACKET_UNIT_ORDERS", _move(99, 5, 6)) == "unit lost"
    found = {"actor_id": 60, "target_id": 1, "action_type": ENUMS["ACTION_FOUND_CITY"]}
    assert outcome("PACKET_UNIT_DO_ACTION", found) == "carried out"  # our city stands there
    assert outcome("PACKET_UNIT_DO_ACTION", {**found, "target_id": 5}) == "refused"
    build = {"city_id": 50, "production_kind": ENUMS["VUT_UTYPE"], "production_value": 3}
    assert outcome("PACKET_CITY_CHANGE", build) == "carried out"
    assert outcome("PACKET_CITY_CHANGE", {**build, "production_value": 0}) == "refused"
    assert outcome("PACKET_PLAYER_RESEARCH", {"tech": 7}) == "carried out"
    fortify = {"unit_id": 61, "activity": ENUMS["ACTIVITY_FORTIFYING"], "target": -1}
    assert outcome("PACKET_UNIT_CHANGE_ACTIVITY", fortify) == "refused"
    v.units[61]["activity"] = ENUMS["ACTIVITY_FORTIFIED"]  # fortifying done at once counts
    assert outcome("PACKET_UNIT_CHANGE_ACTIVITY", fortify) == "carried out"
    # exploring with nothing reachable left: the unit stands idle again, the server silent
    explore = {"unit_id": 60, "activity": ENUMS["ACTIVITY_EXPLORE"], "target": -1}
    v.units[60]["activity"] = ENUMS["ACTIVITY_IDLE"]
    assert outcome("PACKET_UNIT_CHANGE_ACTIVITY", explore) == "carried out"
    attack = {"actor_id": 61, "target_id": 6, "action_type": 1}
    assert outcome("PACKET_UNIT_DO_ACTION", attack, "E_UNIT_WIN_ATT: ...") == "carried out"
    assert outcome("PACKET_UNIT_DO_ACTION", attack) == "refused"  # the server said nothing
    objected = Order(1, "PACKET_UNIT_DO_ACTION", "", "", attack, said="E_UNIT_ILLEGAL_ACTION",
                     objected=True)
    assert judge(objected, v) == "refused"  # a refusal is a message too


def test_the_server_words_go_with_the_order_they_answer_and_losses_say_how():
    v = _view()
    ledger = Ledger()
    ledger.start_turn(v, 1)
    v.messages.append({"event": ENUMS["E_BAD_COMMAND"], "message":
                       '[c fg="#8B0000"]Settlers can only move into your own zone of control.[/c]'})
    order = ledger.sent(v, 1, "PACKET_UNIT_ORDERS", _move(60, 5, 6))
    assert order.outcome == "refused" and order.agent == "unit:60"
    assert order.said == "E_BAD_COMMAND: Settlers can only move into your own zone of control."
    assert ledger.sent(v, 1, "PACKET_PLAYER_RESEARCH", {"tech": 7}).said == ""  # read once
    # unit 60 founds a city (no loss), unit 61 dies to an attack (a loss, with the message)
    v.cities[52] = {"owner": ME, "tile": 5, "size": 1}
    ledger.sent(v, 1, "PACKET_UNIT_DO_ACTION", {"actor_id": 60, "target_id": 5,
                                                "action_type": ENUMS["ACTION_FOUND_CITY"]})
    del v.units[60], v.units[61]
    v.messages.append({"event": ENUMS["E_UNIT_LOST_DEF"],
                       "message": "Your Warriors was killed by the Japanese Archers."})
    ledger.start_turn(v, 2)
    assert ledger.losses == [{"turn": 1, "unit": 61, "type": "warriors", "server_said":
                              "E_UNIT_LOST_DEF: Your Warriors was killed by the Japanese "
                              "Archers."}]
    table = {r["order"]: r for r in ledger.outcomes()}
    assert table["move"]["refused"] == 1 and table["found"]["carried out"] == 1
    assert ledger.refusals() == [("move: E_BAD_COMMAND: Settlers can only move into your own "
                                  "zone of control.", 1)]
    # an attack the server answers with a refusal event is refused, whatever else it said
    v.units[62] = {"owner": ME, "type": 3, "tile": 1}
    v.messages.append({"event": ENUMS["E_UNIT_ILLEGAL_ACTION"], "message": "Illegal action."})
    attack = ledger.sent(v, 2, "PACKET_UNIT_DO_ACTION", {"actor_id": 62, "target_id": 6,
                                                         "action_type": 1})
    assert attack.objected and attack.outcome == "refused"


def test_each_player_has_a_line_and_our_score_splits_by_freecivs_formula():
    v = _view()
    us, ai = player_row(v, ME, 5), player_row(v, AI, 5)
    assert (us["cities"], us["citizens"], us["units"], us["techs"]) == (1, 3, 2, 3)
    assert us["units_by_type"] == "settlers:1 warriors:1" and us["explored"] == 0.25
    assert (us["score_citizens"], us["score_techs"], us["score_wonders"]) == (3, 6, 5)
    assert us["score_other"] == 12 - 3 - 6 - 5
    assert ai["score"] == 20 and (ai["seen_cities"], ai["seen_units"]) == (1, 1)
    assert "techs" not in ai  # what we cannot see is not guessed
    v.players[AI]["score"] = 0  # what the server sends without an embassy: unknown, not 0
    assert player_row(v, AI, 6)["score"] is None


def test_server_markup_is_read_as_plain_text():
    text = ('[c fg="#8B0000"][l tgt="city" id=111 name="nlmcs 102" /] is finished building '
            'Warriors.[/c]')
    assert plain(text) == "nlmcs 102 is finished building Warriors."
    assert said([{"event": 999, "message": "x"}]) == "999: x"


def test_each_loss_gets_its_own_message_even_one_read_with_an_order():
    v = _view()
    v.units[62] = {"owner": ME, "type": 0, "tile": 2}  # a second settler
    ledger = Ledger()
    ledger.start_turn(v, 1)
    # our warriors attack and die: the message comes while the order is processed
    v.messages.append({"event": ENUMS["E_UNIT_LOST_ATT"],
                       "message": "Your attacking Warriors failed against the Archers!"})
    del v.units[61]
    order = ledger.sent(v, 1, "PACKET_UNIT_DO_ACTION", {"actor_id": 61, "target_id": 6,
                                                        "action_type": 1})
    assert "failed against" in order.said
    # then a settler dies to barbarians, and a unit built and killed between two turn starts
    v.messages.append({"event": ENUMS["E_UNIT_LOST_MISC"],
                       "message": "Your Settlers was killed by barbarians."})
    v.messages.append({"event": ENUMS["E_UNIT_LOST_DEF"],
                       "message": "Your Catapult was killed by the Japanese Legion."})
    del v.units[62]
    ledger.start_turn(v, 2)
    rows = {(r["unit"], r["type"]): r["server_said"] for r in ledger.losses}
    assert rows[(61, "warriors")] == ("E_UNIT_LOST_ATT: Your attacking Warriors failed against "
                                      "the Archers!")
    assert rows[(62, "settlers")] == "E_UNIT_LOST_MISC: Your Settlers was killed by barbarians."
    assert rows[(None, "not seen at a turn start")].startswith("E_UNIT_LOST_DEF: Your Catapult")
    assert len(ledger.losses) == 3
