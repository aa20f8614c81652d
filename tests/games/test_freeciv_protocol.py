"""The FreeCiv 3.0 bridge: packets.def reader, codec (frames, compression, delta), server, client.

The codec tests use a small packet set written here in packets.def's syntax. Tests against
FreeCiv's own files need its source (NLMCS_FREECIV_SOURCE, as CI sets after `nlmcs freeciv
fetch-protocol`) and the real-server test needs Debian's freeciv-server; each skips with its
reason where they are missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
from pathlib import Path

import pytest

from nlmcs.errors import UserInputError
from nlmcs.experiments.relevance.log import read_log
from nlmcs.games.freeciv import constants, packets_def
from nlmcs.games.freeciv.client import Client
from nlmcs.games.freeciv.codec import (
    COMPRESSION_BORDER,
    DeltaCache,
    ProtocolError,
    StreamDecoder,
    compressed_block,
    decode_body,
    encode_body,
    frame,
)
from nlmcs.games.freeciv.protocol_source import PACKETS_DEF
from nlmcs.games.freeciv.server import BINARY, FreeCivServer, ServerConfig

DEF = """
/* a comment
   over lines */
type BOOL        = bool8(bool)
type UINT8       = uint8(int)
type UINT16      = uint16(int)
type UINT32      = uint32(int)
type SINT16      = sint16(int)
type STRING      = string(char)
type BV_EXTRAS   = bitvector(bv_extras)
type UFLOAT      = ufloat10000(float)
type REQUIREMENT = requirement(struct requirement)
type WORKLIST    = worklist(struct worklist)
type THING       = UINT16

PACKET_SERVER_JOIN_REQ = 4; cs, no-delta
  STRING username[48];
  UINT32 n;
end

PACKET_SERVER_JOIN_REPLY = 5; sc, no-delta
  BOOL you_can_join;
  STRING message[MAX_LEN_MSG];
  SINT16 conn_id;
end

PACKET_THING_INFO = 20; sc, is-info
  THING id; key
  UINT8 kind;
  BOOL alive, hidden;      # two folded booleans
  STRING name[MAX_LEN_NAME];
  UINT8 count;
  SINT16 values[MAX_NUM_REQS:count];
  BOOL owned[B_LAST]; diff
  BV_EXTRAS extras;
  UFLOAT ratio;
  REQUIREMENT req;
  WORKLIST worklist;
  UINT16 old_style; remove-cap(newcap)
  UINT32 new_style; add-cap(newcap)
end

PACKET_THING_REMOVE = 21; sc, cancel(PACKET_THING_INFO)
  THING id;
end

PACKET_CONN_PING = 88; sc
end

PACKET_CONN_PONG = 89; cs
end
"""


@pytest.fixture(scope="module")
def proto():
    return packets_def.parse(DEF, capabilities="+base newcap")


def thing(**over):
    values = {
        "id": 7, "kind": 3, "alive": True, "hidden": False, "name": "Rome", "count": 3,
        "values": [5, -2, 300], "owned": [False] * 200, "extras": bytes(range(16)),
        "ratio": 1.25, "req": (1, -5, 2, True, False, True), "worklist": ((0, 4), (1, 9)),
        "new_style": 70000,
    }  # fmt: skip
    values.update(over)
    return values


# --- packets.def ---------------------------------------------------------------------------
def test_reader_resolves_aliases_arrays_keys_and_capabilities(proto):
    info = proto["PACKET_THING_INFO"]
    assert info.number == 20 and proto.by_number[20] is info and info.delta
    assert not proto["PACKET_SERVER_JOIN_REQ"].delta
    assert [f.name for f in info.keys] == ["id"]
    fields = {f.name: f for f in info.fields}
    assert fields["id"].dataio == "uint16"  # THING -> UINT16 -> uint16(int)
    assert fields["values"].dims == ((20, "count"),)
    assert fields["owned"].diff and fields["owned"].dims == ((200, 200),)
    assert fields["name"].array_dims == ()  # a string's dimension is its buffer
    assert fields["extras"].bv_bytes == 16 and fields["ratio"].float_factor == 10000
    assert "new_style" in fields and "old_style" not in fields
    without = packets_def.parse(DEF, capabilities="+base")
    names = {f.name for f in without["PACKET_THING_INFO"].fields}
    assert "old_style" in names and "new_style" not in names
    assert proto["PACKET_THING_REMOVE"].cancel == ("PACKET_THING_INFO",)


@pytest.mark.parametrize("text, message", [
    ("type A = nosuch\nPACKET_X = 1; sc\n  A a;\nend\n", "unknown type 'nosuch'"),
    ("PACKET_X = 1; sc\n  UINT8x a;\nend\n", "unknown type"),
    ("type U = uint8(int)\nPACKET_X = 1; sc\n  U a[NO_SUCH_CONSTANT];\nend\n",
     "unknown constant 'NO_SUCH_CONSTANT'"),
    ("type U = uint8(int)\nPACKET_X = 1; sc\n  U a;\n", "has no `end`"),
    ("just words\n", "unexpected line"),
    ("", "no packet definitions"),
])  # fmt: skip
def test_reader_refuses_bad_definitions_in_one_line(text, message):
    with pytest.raises(UserInputError, match=message) as err:
        packets_def.parse(text, source="my.def")
    assert str(err.value).startswith("my.def") and "\n" not in str(err.value)


def test_reader_names_the_unreadable_file(tmp_path):
    with pytest.raises(UserInputError, match="cannot read"):
        packets_def.load(tmp_path / "missing.def")


# --- delta protocol ------------------------------------------------------------------------
def test_a_packet_survives_encoding_and_decoding(proto):
    pkt = proto["PACKET_THING_INFO"]
    body = encode_body(proto, pkt, thing(), DeltaCache())
    got = decode_body(proto, pkt, body, DeltaCache())
    for name, value in thing().items():
        assert got[name] == (list(value) if isinstance(value, list) else value), name


def test_delta_sends_only_what_changed_and_the_receiver_keeps_the_rest(proto):
    pkt = proto["PACKET_THING_INFO"]
    sent, received = DeltaCache(), DeltaCache()
    first = encode_body(proto, pkt, thing(), sent)
    decode_body(proto, pkt, first, received)
    second = encode_body(proto, pkt, thing(kind=4), sent)
    # 2 bytes of field bits (12 non-key fields), the key (2) and the one changed UINT8.
    assert len(second) == 2 + 2 + 1 < len(first)
    got = decode_body(proto, pkt, second, received)
    assert got["kind"] == 4 and got["name"] == "Rome" and got["values"] == [5, -2, 300]


def test_booleans_travel_in_the_field_bits(proto):
    pkt = proto["PACKET_THING_INFO"]
    sent, received = DeltaCache(), DeltaCache()
    decode_body(proto, pkt, encode_body(proto, pkt, thing(), sent), received)
    body = encode_body(proto, pkt, thing(alive=False, hidden=True), sent)
    assert len(body) == 2 + 2  # no payload at all: the two bits say it
    got = decode_body(proto, pkt, body, received)
    assert got["alive"] is False and got["hidden"] is True


def test_a_diff_array_sends_changed_elements_only(proto):
    pkt = proto["PACKET_THING_INFO"]
    sent, received = DeltaCache(), DeltaCache()
    decode_body(proto, pkt, encode_body(proto, pkt, thing(), sent), received)
    owned = [False] * 200
    owned[3] = owned[150] = True
    body = encode_body(proto, pkt, thing(owned=owned), sent)
    assert len(body) == 2 + 2 + 2 * 2 + 1  # (index, value) twice, then the 255 end mark
    assert decode_body(proto, pkt, body, received)["owned"] == owned


def test_keys_have_caches_of_their_own(proto):
    pkt = proto["PACKET_THING_INFO"]
    sent, received = DeltaCache(), DeltaCache()
    decode_body(proto, pkt, encode_body(proto, pkt, thing(id=1, name="A"), sent), received)
    decode_body(proto, pkt, encode_body(proto, pkt, thing(id=2, name="B"), sent), received)
    body = encode_body(proto, pkt, thing(id=1, name="A", kind=9), sent)
    assert len(body) == 2 + 2 + 1  # against key 1's packet, only the kind changed
    got = decode_body(proto, pkt, body, received)
    assert got["name"] == "A" and got["kind"] == 9


def test_cancel_makes_both_sides_forget_that_key(proto):
    info, remove = proto["PACKET_THING_INFO"], proto["PACKET_THING_REMOVE"]
    sent, received = DeltaCache(), DeltaCache()
    decode_body(proto, info, encode_body(proto, info, thing(), sent), received)
    decode_body(proto, remove, encode_body(proto, remove, {"id": 7}, sent), received)
    # After the cancel the sender starts again from zeros, so the whole packet travels ...
    assert len(encode_body(proto, info, thing(), sent)) > 20
    # ... and the receiver is back at zeros too: a packet with nothing but the key is empty.
    bare = encode_body(proto, info, {"id": 7}, DeltaCache())
    got = decode_body(proto, info, bare, received)
    assert got["name"] == "" and got["kind"] == 0 and got["values"] == []


@pytest.mark.parametrize("body, message", [
    (b"\x01", "too short"),
    (b"\xff\xff" + b"\x00\x07" + b"\x03", "unterminated string"),
    (b"\x00\x00\x00\x07" + b"extra", "left over"),
])  # fmt: skip
def test_bad_bytes_are_protocol_errors(proto, body, message):
    with pytest.raises(ProtocolError, match=message):
        decode_body(proto, proto["PACKET_THING_INFO"], body, DeltaCache())


def test_a_bool_must_be_zero_or_one(proto):
    with pytest.raises(ProtocolError, match="bool of value 2"):
        decode_body(proto, proto["PACKET_SERVER_JOIN_REPLY"], b"\x02ok\x00\x00\x01",
                    DeltaCache())


# --- frames --------------------------------------------------------------------------------
def test_frames_cut_from_a_stream_fed_byte_by_byte(proto):
    stream = frame(5, b"\x01hi\x00", type_bytes=1) + frame(88, b"", type_bytes=1)
    dec = StreamDecoder()
    out = []
    for b in stream:
        dec.feed(bytes([b]))
        got = dec.next_frame()
        if got:
            out.append(got)
    assert out == [(5, b"\x01hi\x00"), (88, b"")]


def test_jumbo_and_normal_compressed_blocks_inflate_to_frames():
    small = frame(88, b"", type_bytes=2) * 3
    big = b"".join(frame(20, os.urandom(3000), type_bytes=2) for _ in range(30))  # ~90 kB
    for block in (compressed_block(small), compressed_block(big)):
        dec = StreamDecoder(type_bytes=2)
        dec.feed(block)
        got = []
        while (f := dec.next_frame()) is not None:
            got.append(f)
        assert b"".join(frame(n, b, type_bytes=2) for n, b in got) in (small, big)
    assert struct.unpack(">H", compressed_block(big)[:2])[0] == 0xFFFF  # jumbo header
    assert struct.unpack(">H", compressed_block(small)[:2])[0] >= COMPRESSION_BORDER


def test_a_corrupt_compressed_block_is_a_protocol_error():
    dec = StreamDecoder()
    dec.feed(struct.pack(">H", COMPRESSION_BORDER + 2 + 4) + b"nope")
    with pytest.raises(ProtocolError, match="bad compressed block"):
        dec.next_frame()


def test_the_type_width_switches_inside_the_login_block(proto):
    """The join reply (1-byte type) and what follows it (2-byte types) arrive in one zlib block;
    the client reads the rest of the block with the new width, and sends with it too."""
    ours, theirs = socket.socketpair()
    with Client(proto, ours) as client:
        reply = encode_body(proto, proto["PACKET_SERVER_JOIN_REPLY"],
                            {"you_can_join": True, "message": "hi", "conn_id": 3}, DeltaCache())
        later = encode_body(proto, proto["PACKET_THING_INFO"], thing(), DeltaCache())
        theirs.sendall(compressed_block(frame(5, reply, type_bytes=1)
                                        + frame(20, later, type_bytes=2)))  # fmt: skip
        assert client.join("me")["conn_id"] == 3
        sent = theirs.recv(1000)
        assert struct.unpack(">HB", sent[:3]) == (len(sent), 4)  # 1-byte type before the join
        name, values = client.receive()
        assert name == "PACKET_THING_INFO" and values["name"] == "Rome"
        assert client.view.received["PACKET_THING_INFO"] == 1
        client.send("PACKET_SERVER_JOIN_REQ", username="me", n=1)
        sent = theirs.recv(1000)
        assert struct.unpack(">HH", sent[:4]) == (len(sent), 4)  # 2-byte type after it
        # A ping is answered with a pong on the way to the next packet.
        theirs.sendall(frame(88, b"", type_bytes=2))
        assert client.receive()[0] == "PACKET_CONN_PING"
        assert theirs.recv(100) == frame(89, b"", type_bytes=2)
    theirs.close()


# --- FreeCiv's own files -------------------------------------------------------------------
def _source() -> Path:
    env = os.environ.get("NLMCS_FREECIV_SOURCE")
    if not env or not (Path(env) / PACKETS_DEF).is_file():
        pytest.skip("FreeCiv 3.0 source not found (NLMCS_FREECIV_SOURCE after "
                    "`nlmcs freeciv fetch-protocol`)")
    return Path(env)


def test_freecivs_packets_def_reads_completely():
    proto = packets_def.load(_source() / PACKETS_DEF)
    assert len(proto.packets) > 150
    assert proto["PACKET_SERVER_JOIN_REQ"].number == 4
    assert not proto["PACKET_SERVER_JOIN_REQ"].delta
    assert [f.name for f in proto["PACKET_TILE_INFO"].keys] == ["tile"]
    assert proto["PACKET_UNIT_INFO"].number == 63
    assert "PACKET_UNIT_SHORT_INFO" in proto["PACKET_UNIT_INFO"].cancel
    city = {f.name for f in proto["PACKET_CITY_INFO"].fields}
    assert "culture32" in city and "culture16" not in city  # cityculture32 is announced


def test_the_wire_constants_are_freecivs(tmp_path):
    """Recompile every constant of `constants` from FreeCiv's headers and compare."""
    src = _source()
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    headers = ["fc_types.h", "city.h", "improvement.h", "extras.h", "player.h", "actions.h",
               "unit.h", "tile.h",
               "unittype.h", "tech.h", "terrain.h", "nation.h", "disaster.h", "spaceship.h",
               "connection.h", "game.h", "traderoutes.h", "multipliers.h", "research.h",
               "calendar.h", "achievements.h", "events.h", "packets.h"]  # fmt: skip
    work = tmp_path
    (work / "fc_config.h").write_text("#define HAVE_PTHREAD 1\n")
    (work / "freeciv_config.h").write_text(
        "#define FREECIV_HAVE_PTHREAD 1\n#define FREECIV_HAVE_STDBOOL_H 1\n"
        "#define FREECIV_HAVE_INTTYPES_H 1\n#define FREECIV_HAVE_STDINT_H 1\n"
        "#define FREECIV_AI_MOD_LAST 2\n")
    found = [h for h in headers if (src / "common" / h).is_file()
             or (src / "common" / "networking" / h).is_file()]  # fmt: skip
    lines = ["#include <stdio.h>", *(f'#include "{h}"' for h in found), "int main(void){"]
    lines += [f'printf("{k} %d\\n", (int)({k}));' for k in constants.SIZES]
    lines += [f'printf("{k} %d\\n", (int)sizeof({k}));' for k in constants.BITVECTOR_BYTES]
    lines += [f'printf("{k} %d\\n", (int)({k}));' for k in constants.ENUMS]
    lines += ["return 0;}"]
    (work / "c.c").write_text("\n".join(lines))
    inc = [f"-I{p}" for p in (work, src / "common", src / "utility", src / "common/networking",
                              src / "common/aicore")]  # fmt: skip
    done = subprocess.run([cc, *inc, str(work / "c.c"), "-o", str(work / "c")],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"FreeCiv's headers do not compile here: {done.stderr.strip()[:200]}")
    out = subprocess.run([str(work / "c")], capture_output=True, text=True, check=True).stdout
    got = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    assert got == {**constants.SIZES, **constants.BITVECTOR_BYTES, **constants.ENUMS}


# --- a real server -------------------------------------------------------------------------
def test_a_short_game_against_a_real_server(tmp_path):
    src = _source()
    if not os.access(BINARY, os.X_OK) and shutil.which("freeciv-server") is None:
        pytest.skip("freeciv-server is not installed (apt-get install freeciv-server)")
    from nlmcs.games.freeciv.probe import probe

    proto = packets_def.load(src / PACKETS_DEF)
    rows = probe(proto=proto, config=ServerConfig(seed=3, ai_level="novice"), turns=3,
                 out=tmp_path / "probe.csv", log=lambda line: None)  # fmt: skip
    assert [r["turn"] for r in rows] == [1, 2, 3]
    assert rows[0]["cities"] >= 1  # our settlers founded a city on turn 1
    assert rows[-1]["units"] >= 1 and rows[-1]["known_tiles"] > 0
    assert rows[-1]["packet_types"] > 50  # rulesets, map, units, ... all decoded
    assert (tmp_path / "probe.csv").read_text().startswith("turn,units,cities")


def test_the_server_is_stopped_whatever_happens():
    if not os.access(BINARY, os.X_OK):
        pytest.skip("freeciv-server is not installed (apt-get install freeciv-server)")
    server = FreeCivServer(ServerConfig(seed=1))
    with pytest.raises(RuntimeError), server:
        pid, where = server.proc.pid, server.dir
        socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
        raise RuntimeError("boom")
    assert server.proc is None and not where.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_an_unknown_ai_level_is_refused():
    with pytest.raises(UserInputError, match="ai_level='genius': choose from novice, easy"):
        ServerConfig(ai_level="genius")


def test_a_server_that_refuses_the_connection_is_one_line():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UserInputError, match=f"cannot connect to the server at 127.0.0.1:{port}"):
        Client.connect(None, "127.0.0.1", port, timeout=5)


def test_a_seed_the_server_would_keep_as_random_is_refused():
    assert "set mapseed 2147483647" in ServerConfig(seed=2**31 - 2).script()
    with pytest.raises(UserInputError, match="seed=2147483647"):
        ServerConfig(seed=2**31 - 1)  # FreeCiv keeps a mapseed past 2**31 - 1 as 0: random


def test_a_planner_plays_a_real_server_and_the_rules_gap_is_reported(tmp_path):
    src = _source()
    if not os.access(BINARY, os.X_OK) and shutil.which("freeciv-server") is None:
        pytest.skip("freeciv-server is not installed (apt-get install freeciv-server)")
    from nlmcs.experiments.freeciv_play import play_freeciv
    from nlmcs.search.config import SearchConfig

    played = play_freeciv(proto=packets_def.load(src / PACKETS_DEF),
                          server=ServerConfig(seed=4, ai_level="novice"), method="uct", turns=4,
                          seed=4, search_config=SearchConfig(rollouts=20, depth=4),
                          out=tmp_path, log_decisions=tmp_path / "decisions.jsonl",
                          log=lambda line: None)  # fmt: skip
    turns = played.turns
    assert [t["turn"] for t in turns] == [1, 2, 3, 4]
    assert sum(t["orders"] for t in turns) > 0  # moves, cities, research were sent
    assert all("predicted_units" in t for t in turns[1:])
    assert played.gaps["unknown tile (guessed tundra)"] > 0
    summary = (tmp_path / "summary.md").read_text()
    assert "Rules gap" in summary and "fog of war" in summary
    assert (tmp_path / "gaps.csv").read_text().startswith("horizon,measure,turns,predicted")
    # the diagnosis: both players per turn, every order with its outcome, a plot
    from nlmcs.experiments.freeciv_play import REPORT_FILES
    from nlmcs.experiments.freeciv_report import OUTCOMES

    assert all((tmp_path / name).is_file() for name in REPORT_FILES)
    assert [(r["turn"], r["player"]) for r in played.players][:2] == [(1, "us"), (1, "ai")]
    assert played.ledger.orders and {o.outcome for o in played.ledger.orders} <= set(OUTCOMES)
    assert any(o.detail.startswith("found city") and o.outcome == "carried out"
               for o in played.ledger.orders)  # our first settlers founded a city
    assert "what the server did with them" in summary
    # The decision log reads like `nlmcs play`'s: game record first, end record last.
    log = read_log(tmp_path / "decisions.jsonl")
    assert log.header["method"] == "uct" and log.header["opponent"] == "freeciv-novice"
    assert log.header["freeciv"]["seed"] == 4 and log.header["search"]["rollouts"] == 20
    assert log.end["steps"] == 4 and log.end["scores"] == played.result["scores"]
    assert {r["freeciv_turn"] for r in log.decisions} == {1, 2, 3, 4}


def test_a_game_that_stops_early_keeps_the_diagnosis_of_the_turns_played(tmp_path,
                                                                          monkeypatch):
    src = _source()
    if not os.access(BINARY, os.X_OK) and shutil.which("freeciv-server") is None:
        pytest.skip("freeciv-server is not installed (apt-get install freeciv-server)")
    import nlmcs.experiments.freeciv_play as fp

    real, calls = fp._predict, []

    def predict(*args):  # one call a turn, as long as no 5-turn replay is due: lost in turn 3
        calls.append(1)
        if len(calls) == 3:
            raise ConnectionResetError("the server went away")
        return real(*args)

    monkeypatch.setattr(fp, "_predict", predict)
    with pytest.raises(ConnectionResetError):
        fp.play_freeciv(proto=packets_def.load(src / PACKETS_DEF),
                        server=ServerConfig(seed=5, ai_level="novice"), method="howto", turns=6,
                        seed=5, out=tmp_path, log=lambda line: None)
    assert all((tmp_path / name).is_file() for name in fp.REPORT_FILES)
    summary = (tmp_path / "summary.md").read_text()
    assert "**Stopped early** (ConnectionResetError: the server went away)" in summary
    assert (tmp_path / "turns.csv").read_text().count("\n") == 1 + 2  # two whole turns


def test_a_recorded_server_stream_replays_and_survives_re_encoding():
    """Bytes recorded from a real server (in this run, never stored) decode to the same packets
    when replayed, and every packet encoded again (with the delta caches) decodes unchanged."""
    src = _source()
    if not os.access(BINARY, os.X_OK) and shutil.which("freeciv-server") is None:
        pytest.skip("freeciv-server is not installed (apt-get install freeciv-server)")
    proto = packets_def.load(src / PACKETS_DEF)
    live = []
    with FreeCivServer(ServerConfig(seed=5, ai_level="novice")) as srv, \
            Client.connect(proto, "127.0.0.1", srv.port) as client:  # fmt: skip
        client.recording = bytearray()
        major, minor, patch = constants.VERSION
        client.send("PACKET_SERVER_JOIN_REQ", username="nlmcs", capability=constants.CAPABILITY,
                    version_label="", major_version=major, minor_version=minor,
                    patch_version=patch)  # fmt: skip
        turns = 0
        while turns < 2:
            name, values = client.receive()
            live.append((name, values))
            if name == "PACKET_SERVER_JOIN_REPLY":
                srv.command("start")
            if name == "PACKET_BEGIN_TURN":
                turns += 1
                client.send("PACKET_PLAYER_PHASE_DONE", turn=client.view.turn)
        recording = bytes(client.recording)
    dec, cache, replayed = StreamDecoder(), DeltaCache(), []
    dec.feed(recording)
    while len(replayed) < len(live) and (got := dec.next_frame()) is not None:
        pkt = proto.by_number[got[0]]
        values = decode_body(proto, pkt, got[1], cache)
        replayed.append((pkt.name, values))
        if pkt.name == "PACKET_SERVER_JOIN_REPLY" and values["you_can_join"]:
            dec.type_bytes = 2
    assert [n for n, _ in replayed] == [n for n, _ in live] and replayed == live
    assert len({n for n, _ in live}) > 50 and len(recording) > 100_000
    info = next(v for n, v in live if n == "PACKET_MAP_INFO")  # our server's map wraps
    assert info["topology_id"] & constants.ENUMS["TF_WRAPX"]
    sent, received = DeltaCache(), DeltaCache()
    for name, values in live:
        body = encode_body(proto, proto[name], values, sent)
        assert decode_body(proto, proto[name], body, received) == values, name


def test_a_server_outlives_a_killed_client_by_seconds_only():
    """kill -9 of our process runs no clean-up; the server then quits on its own (quitidle)."""
    src = _source()
    if not os.access(BINARY, os.X_OK):
        pytest.skip("freeciv-server is not installed (apt-get install freeciv-server)")
    import sys
    import time

    script = (
        "import sys, time\n"
        "from nlmcs.games.freeciv import packets_def\n"
        "from nlmcs.games.freeciv.client import Client\n"
        "from nlmcs.games.freeciv.server import FreeCivServer, ServerConfig\n"
        f"proto = packets_def.load({str(src / PACKETS_DEF)!r})\n"
        "srv = FreeCivServer(ServerConfig(seed=1)).__enter__()\n"
        "Client.connect(proto, '127.0.0.1', srv.port).join('nlmcs')\n"
        "print(srv.proc.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(child.stdout.readline())
    finally:
        child.kill()
        child.wait()
    # It quits QUIT_IDLE_SECONDS after the connection drops; the margin is for a loaded machine
    # (once, with both cores busy, 30 s was not enough).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.5)
    os.kill(server_pid, 9)
    pytest.fail("the server outlived its killed client by 60 s")
