"""The C constants of FreeCiv 3.0 that the wire format depends on.

Array lengths named in `packets.def` and the byte sizes of its bit vectors are C constants of
FreeCiv's headers, not written in the file. These are FreeCiv 3.0.6's values (Debian 12); the test
suite recompiles them from the headers of the source package when a C compiler and the source
are present (tests/games/test_freeciv_protocol.py).
"""

from __future__ import annotations

VERSION = (3, 0, 6)
VERSION_LABEL = ""
CAPABILITY = "+Freeciv-3.0-network year32 plrculture32 pingfix researchclr cityculture32"
"""What the client announces; optional capabilities also select `add-cap`/`remove-cap` fields."""

SIZES = {
    "ATTRIBUTE_CHUNK_SIZE": 1400, "A_LAST": 200, "B_LAST": 200, "FEELING_LAST": 6,
    "MAX_CALENDAR_FRAGMENTS": 52, "MAX_GRANARY_INIS": 24, "MAX_LEN_ADDR": 256,
    "MAX_LEN_CAPSTR": 512, "MAX_LEN_CITYNAME": 80, "MAX_LEN_CONTENT": 4076, "MAX_LEN_ENUM": 64,
    "MAX_LEN_MAP_LABEL": 64, "MAX_LEN_MSG": 1536, "MAX_LEN_NAME": 48, "MAX_LEN_PACKET": 4096,
    "MAX_LEN_PASSWORD": 512, "MAX_LEN_ROUTE": 2000, "MAX_NUM_ACTIONS": 44,
    "MAX_NUM_BUILDING_LIST": 10, "MAX_NUM_CONNECTIONS": 320, "MAX_NUM_LEADERS": 200,
    "MAX_NUM_MULTIPLIERS": 15, "MAX_NUM_NATIONS": 65535, "MAX_NUM_NATION_GROUPS": 128,
    "MAX_NUM_NATION_SETS": 32, "MAX_NUM_PLAYER_SLOTS": 160, "MAX_NUM_REQS": 20,
    "MAX_NUM_RULESETS": 63, "MAX_NUM_TECH_LIST": 10, "MAX_NUM_UNIT_LIST": 10,
    "MAX_RESOURCE_TYPES": 48, "MAX_RULESET_NAME_LENGTH": 64, "MAX_TRADE_ROUTES": 5,
    "MAX_VET_LEVELS": 20, "O_LAST": 6, "SP_MAX": 20,
}  # fmt: skip
"""Array lengths used in `packets.def`."""

BITVECTOR_BYTES = {
    "bv_actions": 6, "bv_base_flags": 1, "bv_bases": 16, "bv_city_options": 1,
    "bv_disaster_effects": 1, "bv_extra_flags": 3, "bv_extras": 16, "bv_goods_flags": 1,
    "bv_impr_flags": 1, "bv_imprs": 25, "bv_player": 20, "bv_plr_flags": 1,
    "bv_road_flags": 1, "bv_roads": 16, "bv_spaceship_structure": 4, "bv_special": 16,
    "bv_startpos_nations": 128, "bv_tech_flags": 2, "bv_terrain_flags": 3,
    "bv_unit_class_flags": 3, "bv_unit_classes": 4, "bv_unit_type_flags": 9,
    "bv_unit_type_roles": 8,
}  # fmt: skip
"""Bytes on the wire of each bit vector type (`sizeof` of the C type)."""

ENUMS = {
    # enum gen_action (action ids are fixed in 3.0; their names in the ruleset are not)
    "ACTION_FOUND_CITY": 25, "ACTION_ATTACK": 41, "ACTION_CONQUER_CITY": 42, "ACTION_NONE": 44,
    # enum unit_activity
    "ACTIVITY_IDLE": 0, "ACTIVITY_MINE": 3, "ACTIVITY_IRRIGATE": 4, "ACTIVITY_FORTIFIED": 5,
    "ACTIVITY_SENTRY": 7, "ACTIVITY_EXPLORE": 11, "ACTIVITY_FORTIFYING": 15,
    "ACTIVITY_GEN_ROAD": 19, "ACTIVITY_LAST": 21, "ACTIVITY_FACTOR": 10,
    # enum universals_n (what a city builds), enum unit_orders, enum direction8
    "VUT_IMPROVEMENT": 3, "VUT_UTYPE": 6, "ORDER_MOVE": 0, "ORDER_ACTION_MOVE": 3,
    "DIR8_NORTHWEST": 0, "DIR8_NORTH": 1, "DIR8_NORTHEAST": 2, "DIR8_WEST": 3, "DIR8_EAST": 4,
    "DIR8_SOUTHWEST": 5, "DIR8_SOUTH": 6, "DIR8_SOUTHEAST": 7,
    # enum tech_state, enum known_type, tech ids
    "TECH_KNOWN": 2, "TILE_UNKNOWN": 0, "A_NONE": 0, "A_UNSET": 202,
    # enum impr_genus_id; enum event_type (what the server's messages are about)
    "IG_GREAT_WONDER": 0, "E_CITY_LOST": 1, "E_UNIT_LOST_ATT": 76, "E_UNIT_LOST_DEF": 80,
    "E_UNIT_ORDERS": 85, "E_BAD_COMMAND": 93, "E_UNIT_LOST_MISC": 103,
    "E_UNIT_ILLEGAL_ACTION": 117,
    # enum topo_flag (bits of PACKET_MAP_INFO's topology_id)
    "TF_WRAPX": 1,
}  # fmt: skip
"""Enum values the bridge sends or reads, by their C names."""

ACTION_FOUND_CITY = ENUMS["ACTION_FOUND_CITY"]
