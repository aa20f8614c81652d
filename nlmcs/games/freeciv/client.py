"""A FreeCiv 3.0 client connection and what the server has told it (`View`).

The client joins with the 3.0 capability string, answers pings, and decodes every packet the
server sends (a packet it cannot decode is an error, not skipped: the delta caches would go
wrong). The view holds the latest packet of each kind per id (tiles, units, cities, players),
as a player sees them: FreeCiv sends a client only what its fog of war lets it see.
"""

from __future__ import annotations

import socket
from collections import Counter
from dataclasses import dataclass, field

from nlmcs.games.freeciv import constants
from nlmcs.games.freeciv.codec import (
    DeltaCache,
    ProtocolError,
    StreamDecoder,
    decode_body,
    encode_body,
    frame,
)
from nlmcs.games.freeciv.packets_def import Protocol

# What the view keeps, by packet: (dictionary in View, key field).
_KEPT = {
    "PACKET_TILE_INFO": ("tiles", "tile"),
    "PACKET_UNIT_INFO": ("units", "id"),
    "PACKET_UNIT_SHORT_INFO": ("units", "id"),
    "PACKET_CITY_INFO": ("cities", "id"),
    "PACKET_CITY_SHORT_INFO": ("cities", "id"),
    "PACKET_PLAYER_INFO": ("players", "playerno"),
    "PACKET_RESEARCH_INFO": ("research", "id"),
    "PACKET_RULESET_UNIT": ("unit_types", "id"),
    "PACKET_RULESET_TERRAIN": ("terrains", "id"),
    "PACKET_RULESET_BUILDING": ("buildings", "id"),
    "PACKET_RULESET_TECH": ("techs", "id"),
    "PACKET_RULESET_ACTION": ("actions", "id"),
    "PACKET_RULESET_EXTRA": ("extras", "id"),
    "PACKET_RULESET_GOVERNMENT": ("governments", "id"),
}
_REMOVED = {"PACKET_UNIT_REMOVE": ("units", "unit_id"), "PACKET_CITY_REMOVE": ("cities", "city_id"),
            "PACKET_PLAYER_REMOVE": ("players", "playerno")}  # fmt: skip


@dataclass
class View:
    """The game as the server has shown it to this client."""

    tiles: dict[int, dict] = field(default_factory=dict)
    units: dict[int, dict] = field(default_factory=dict)
    cities: dict[int, dict] = field(default_factory=dict)
    players: dict[int, dict] = field(default_factory=dict)
    research: dict[int, dict] = field(default_factory=dict)
    unit_types: dict[int, dict] = field(default_factory=dict)  # the ruleset, by id
    terrains: dict[int, dict] = field(default_factory=dict)
    buildings: dict[int, dict] = field(default_factory=dict)
    techs: dict[int, dict] = field(default_factory=dict)
    actions: dict[int, dict] = field(default_factory=dict)
    extras: dict[int, dict] = field(default_factory=dict)
    governments: dict[int, dict] = field(default_factory=dict)
    latest: dict[str, dict] = field(default_factory=dict)  # the last packet of every kind
    messages: list[dict] = field(default_factory=list)  # the server's event messages, in order
    received: Counter = field(default_factory=Counter)
    player_id: int | None = None
    conn_id: int | None = None

    @property
    def turn(self) -> int:
        return int(self.latest.get("PACKET_GAME_INFO", {}).get("turn", 0))

    def update(self, name: str, values: dict) -> None:
        self.received[name] += 1
        self.latest[name] = values
        if name in _KEPT:
            table, key = _KEPT[name]
            row = getattr(self, table).setdefault(values[key], {})
            if row.get("_packet", name) != name:
                row.clear()  # full and short info of one city or unit: keep no stale fields
            row.update(values)
            row["_packet"] = name
        elif name in _REMOVED:
            table, key = _REMOVED[name]
            getattr(self, table).pop(values[key], None)
        elif name in ("PACKET_CHAT_MSG", "PACKET_EARLY_CHAT_MSG"):
            self.messages.append({k: values.get(k) for k in ("turn", "event", "tile",
                                                             "message")})
        elif name == "PACKET_CONN_INFO" and values.get("id") == self.conn_id:
            self.player_id = values.get("player_num")


class Client:
    """One connection to a FreeCiv 3.0 server."""

    def __init__(self, proto: Protocol, sock: socket.socket):
        self.proto = proto
        self.sock = sock
        self.decoder = StreamDecoder()
        self.received_cache = DeltaCache()
        self.sent_cache = DeltaCache()
        self.type_bytes = 1
        self.view = View()
        self.pending: list[tuple[str, dict]] = []
        self.recording: bytearray | None = None  # set to a bytearray to keep every byte read

    @classmethod
    def connect(cls, proto: Protocol, host: str, port: int, *, timeout: float = 60.0) -> Client:
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:  # refused or timed out: one line, as a lost connection is
            raise ProtocolError(f"cannot connect to the server at {host}:{port} "
                                f"({e.strerror or e})") from None
        return cls(proto, sock)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, packet: str, /, **values) -> None:
        pkt = self.proto[packet]
        body = encode_body(self.proto, pkt, values, self.sent_cache)
        try:
            self.sock.sendall(frame(pkt.number, body, type_bytes=self.type_bytes))
        except OSError as e:
            raise ProtocolError(f"cannot send to the server ({e.strerror or e})") from None

    def join(self, username: str) -> dict:
        """Ask to join; returns the server's reply (refusals raise, with the server's reason)."""
        major, minor, patch = constants.VERSION
        self.send("PACKET_SERVER_JOIN_REQ", username=username, capability=constants.CAPABILITY,
                  version_label=constants.VERSION_LABEL, major_version=major,
                  minor_version=minor, patch_version=patch)  # fmt: skip
        while True:
            name, values = self.receive()
            if name == "PACKET_SERVER_JOIN_REPLY":
                if not values["you_can_join"]:
                    raise ProtocolError(f"server refused the join: {values['message']}")
                self.view.conn_id = values["conn_id"]
                return values

    def receive(self) -> tuple[str, dict]:
        """The next packet (pings are answered on the way)."""
        while True:
            if self.pending:
                return self.pending.pop(0)
            got = self.decoder.next_frame()
            if got is None:
                try:
                    data = self.sock.recv(1 << 16)
                except OSError as e:
                    raise ProtocolError(f"cannot read from the server ({e.strerror or e})"
                                        ) from None
                if not data:
                    raise ProtocolError("the server closed the connection")
                if self.recording is not None:
                    self.recording += data
                self.decoder.feed(data)
                continue
            number, body = got
            pkt = self.proto.by_number.get(number)
            if pkt is None:
                raise ProtocolError(f"unknown packet type {number}")
            values = decode_body(self.proto, pkt, body, self.received_cache)
            if pkt.name == "PACKET_SERVER_JOIN_REPLY" and values["you_can_join"]:
                # Every later frame, both ways, has a 2-byte type (even inside this block).
                self.decoder.type_bytes = self.type_bytes = 2
            if pkt.name == "PACKET_CONN_PING":
                self.send("PACKET_CONN_PONG")
            self.view.update(pkt.name, values)
            return pkt.name, values

    def receive_until(self, names: set[str]) -> tuple[str, dict]:
        while True:
            name, values = self.receive()
            if name in names:
                return name, values
