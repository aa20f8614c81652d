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

ACTION_FOUND_CITY = 25
"""`enum gen_action` value of founding a city (action ids are fixed in 3.0, names are not)."""
