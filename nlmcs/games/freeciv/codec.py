"""FreeCiv 3.0's wire format: frames, compression and the delta protocol.

A frame is a 2-byte big-endian length (counting itself) and a packet type, 1 byte until the
server accepts the join, 2 bytes after; the switch takes effect right after the join reply, which
can sit in the middle of a compressed block. A length >= 16385 marks a zlib block of length - 16385
bytes (header included), 0xFFFF a jumbo block with a 4-byte length after it; a block inflates to
more frames. A delta packet starts with a bit per non-key field (set: the field follows; for a
plain BOOL field the bit is its value), then its key fields; each side keeps the last packet of
each type and key, and missing fields keep their old values (zero at first). A `diff` array sends
(uint8 index, value) pairs up to index 255. `cancel(P)` forgets P's packet of the same key.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

from nlmcs.errors import UserInputError
from nlmcs.games.freeciv.packets_def import Field, Packet, Protocol

COMPRESSION_BORDER = 16 * 1024 + 1
JUMBO_SIZE = 0xFFFF
DIFF_END = 255


class ProtocolError(UserInputError):
    """The server's bytes do not decode as the packet definitions say, or the connection failed:
    one line for the user (with the server's log, where the caller has it), no traceback."""


# --- values ----------------------------------------------------------------------------------
class Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ProtocolError(f"packet too short: wanted {n} bytes at {self.pos} of "
                                f"{len(self.data)}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise ProtocolError("unterminated string")
        out = self.data[self.pos:end].decode("utf-8", errors="replace")
        self.pos = end + 1
        return out


_INTS = {"uint8": ">B", "uint16": ">H", "uint32": ">I", "sint8": ">b", "sint16": ">h",
         "sint32": ">i"}  # fmt: skip


def read_value(r: Reader, f: Field):
    kind = f.dataio
    if kind in _INTS:
        return r.unpack(_INTS[kind])
    if kind == "bool8":
        v = r.unpack(">B")
        if v > 1:
            raise ProtocolError(f"{f.name}: bool of value {v}")
        return bool(v)
    if kind in ("string", "estring"):
        return r.string()
    if kind == "bitvector":
        return r.take(f.bv_bytes)
    if kind == "ufloat":
        return r.unpack(">I") / f.float_factor
    if kind == "sfloat":
        return r.unpack(">i") / f.float_factor
    if kind == "requirement":
        kind_, value, range_ = r.unpack(">B"), r.unpack(">i"), r.unpack(">B")
        survives, present, quiet = (bool(r.unpack(">B")) for _ in range(3))
        return (kind_, value, range_, survives, present, quiet)
    if kind == "worklist":
        return tuple((r.unpack(">B"), r.unpack(">B")) for _ in range(r.unpack(">B")))
    if kind == "action_probability":
        return (r.unpack(">B"), r.unpack(">B"))
    raise ProtocolError(f"{f.name}: no reader for type {kind}")


def write_value(out: bytearray, f: Field, v) -> None:
    kind = f.dataio
    if kind in _INTS:
        out += struct.pack(_INTS[kind], int(v))
    elif kind == "bool8":
        out.append(1 if v else 0)
    elif kind in ("string", "estring"):
        out += str(v).encode("utf-8") + b"\0"
    elif kind == "bitvector":
        b = bytes(v)
        if len(b) != f.bv_bytes:
            raise ProtocolError(f"{f.name}: bit vector of {len(b)} bytes, not {f.bv_bytes}")
        out += b
    elif kind in ("ufloat", "sfloat"):
        out += struct.pack(">I" if kind == "ufloat" else ">i", round(v * f.float_factor))
    elif kind == "requirement":
        kind_, value, range_, survives, present, quiet = v
        out += struct.pack(">BiBBBB", kind_, value, range_, survives, present, quiet)
    elif kind == "worklist":
        out.append(len(v))
        for kind_, value in v:
            out += struct.pack(">BB", kind_, value)
    elif kind == "action_probability":
        out += struct.pack(">BB", *v)
    else:
        raise ProtocolError(f"{f.name}: no writer for type {kind}")


def zero(f: Field):
    """A field's value before anything was received (the C side's memset 0)."""
    if f.dataio == "memory":
        return b""
    if f.array_dims:
        full, transfer = f.array_dims[0]
        n = full if f.diff else (transfer if isinstance(transfer, int) else 0)
        return [_zero_scalar(f)] * n
    return _zero_scalar(f)


def _zero_scalar(f: Field):
    kind = f.dataio
    if kind == "bool8":
        return False
    if kind in ("string", "estring"):
        return ""
    if kind == "bitvector":
        return bytes(f.bv_bytes)
    if kind in ("ufloat", "sfloat"):
        return 0.0
    if kind == "requirement":
        return (0, 0, 0, False, False, False)
    if kind == "worklist":
        return ()
    if kind == "action_probability":
        return (0, 0)
    return 0


def _count(f: Field, values: dict) -> int:
    full, transfer = f.array_dims[0] if f.array_dims else f.dims[0]
    n = values.get(transfer, 0) if isinstance(transfer, str) else transfer
    if not 0 <= n <= full:
        raise ProtocolError(f"{f.name}: {n} elements of an array of {full}")
    return n


def read_field(r: Reader, f: Field, values: dict, *, delta: bool):
    if f.dataio == "memory":
        return r.take(_count(f, values))
    if not f.array_dims:
        return read_value(r, f)
    if delta and f.diff:
        arr = list(values.get(f.name) or zero(f))
        full = f.array_dims[0][0]
        while True:
            i = r.unpack(">B")
            if i == DIFF_END:
                return arr
            if i >= full:
                raise ProtocolError(f"{f.name}: diff index {i} beyond {full}")
            arr[i] = read_value(r, f)
    return [read_value(r, f) for _ in range(_count(f, values))]


def write_field(out: bytearray, f: Field, v, values: dict, old, *, delta: bool) -> None:
    if f.dataio == "memory":
        n = _count(f, values)
        out += bytes(v)[:n].ljust(n, b"\0")
        return
    if not f.array_dims:
        write_value(out, f, v)
        return
    if delta and f.diff:
        old = list(old) if old else zero(f)
        for i, x in enumerate(v):
            if i >= len(old) or old[i] != x:
                out.append(i)
                write_value(out, f, x)
        out.append(DIFF_END)
        return
    n = _count(f, values)
    if len(v) < n:
        raise ProtocolError(f"{f.name}: {len(v)} elements, {n} to send")
    for x in list(v)[:n]:
        write_value(out, f, x)


# --- packets ---------------------------------------------------------------------------------
@dataclass
class DeltaCache:
    """The last packet of each type and key, one per direction of a connection."""

    last: dict[int, dict[tuple, dict]] = field(default_factory=dict)

    def get(self, pkt: Packet, key: tuple) -> dict | None:
        return self.last.get(pkt.number, {}).get(key)

    def put(self, pkt: Packet, key: tuple, values: dict) -> None:
        self.last.setdefault(pkt.number, {})[key] = dict(values)

    def cancel(self, number: int, key: tuple) -> None:
        self.last.get(number, {}).pop(key, None)


def decode_body(proto: Protocol, pkt: Packet, body: bytes, cache: DeltaCache) -> dict:
    """A packet's fields from its body (the bytes after the frame header)."""
    r = Reader(body)
    if not pkt.delta or not pkt.fields:
        values: dict = {}
        for f in pkt.fields:
            values[f.name] = read_field(r, f, values, delta=False)
    else:
        others = pkt.others
        bits = r.take((len(others) + 7) // 8)
        keys = {}
        for f in pkt.keys:
            keys[f.name] = read_field(r, f, keys, delta=True)
        key = tuple(keys.values())
        old = cache.get(pkt, key)
        values = dict(old) if old is not None else {f.name: zero(f) for f in pkt.fields}
        values.update(keys)
        for i, f in enumerate(others):
            sent = bits[i // 8] >> (i % 8) & 1
            if f.is_bool and not f.array_dims:
                values[f.name] = bool(sent)
            elif sent:
                values[f.name] = read_field(r, f, values, delta=True)
        cache.put(pkt, key, values)
        _cancel(proto, pkt, values, cache)
    if r.pos != len(body):
        raise ProtocolError(f"{pkt.name}: {len(body) - r.pos} bytes left over")
    return values


def encode_body(proto: Protocol, pkt: Packet, values: dict, cache: DeltaCache) -> bytes:
    """A packet's body; fields missing from `values` count as zero."""
    out = bytearray()
    full = {f.name: values.get(f.name, zero(f)) for f in pkt.fields}
    if not pkt.delta or not pkt.fields:
        for f in pkt.fields:
            write_field(out, f, full[f.name], full, None, delta=False)
        return bytes(out)
    key = tuple(full[f.name] for f in pkt.keys)
    old = cache.get(pkt, key) or {f.name: zero(f) for f in pkt.fields}
    others = pkt.others
    bits = bytearray((len(others) + 7) // 8)
    body = bytearray()
    for i, f in enumerate(others):
        v = full[f.name]
        if f.is_bool and not f.array_dims:
            sent = bool(v)
        else:
            sent = _differs(f, v, old[f.name])
            if sent:
                write_field(body, f, v, full, old[f.name], delta=True)
        if sent:
            bits[i // 8] |= 1 << (i % 8)
    out += bits
    for f in pkt.keys:
        write_field(out, f, full[f.name], full, None, delta=True)
    out += body
    cache.put(pkt, key, full)
    _cancel(proto, pkt, full, cache)
    return bytes(out)


def _cancel(proto: Protocol, pkt: Packet, values: dict, cache: DeltaCache) -> None:
    """Both sides forget the packets `pkt` cancels that have its key: as FreeCiv compares the
    cancelled packet's key fields with the same number of leading fields of `pkt`."""
    for name in pkt.cancel:
        target = proto.packets.get(name)
        if target is not None:
            lead = pkt.fields[:len(target.keys)]
            cache.cancel(target.number, tuple(values[f.name] for f in lead))


def _differs(f: Field, new, old) -> bool:
    if f.array_dims and not f.diff and f.dataio != "memory":
        return list(new) != list(old)
    if f.array_dims and f.diff:
        return list(new) != list(old or zero(f))
    return new != old


# --- frames ----------------------------------------------------------------------------------
def frame(number: int, body: bytes, *, type_bytes: int) -> bytes:
    header = 2 + type_bytes
    if header + len(body) >= COMPRESSION_BORDER:
        raise ProtocolError(f"packet {number} of {len(body)} bytes is too long for one frame")
    kind = struct.pack(">B" if type_bytes == 1 else ">H", number)
    return struct.pack(">H", header + len(body)) + kind + body


def compressed_block(frames: bytes) -> bytes:
    """Frames in one zlib block, as the server sends a burst (normal or jumbo header)."""
    data = zlib.compress(frames)
    if len(data) + 2 < JUMBO_SIZE - COMPRESSION_BORDER - 1:
        return struct.pack(">H", 2 + len(data) + COMPRESSION_BORDER) + data
    return struct.pack(">HI", JUMBO_SIZE, 6 + len(data)) + data


@dataclass
class StreamDecoder:
    """Cuts a byte stream into (packet number, body) frames, inflating compressed blocks.

    `type_bytes` is 1 until the join is accepted; the owner sets it to 2 right after decoding
    an accepting join reply, before asking for the next frame."""

    type_bytes: int = 1
    buffer: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def next_frame(self) -> tuple[int, bytes] | None:
        while True:
            buf = self.buffer
            if len(buf) < 2:
                return None
            (length,) = struct.unpack_from(">H", buf)
            if length == JUMBO_SIZE:
                if len(buf) < 6:
                    return None
                (whole,) = struct.unpack_from(">I", buf, 2)
                start = 6
            elif length >= COMPRESSION_BORDER:
                whole, start = length - COMPRESSION_BORDER, 2
            else:
                if length < 2 + self.type_bytes:
                    raise ProtocolError(f"frame length {length} shorter than its header")
                if len(buf) < length:
                    return None
                fmt = ">B" if self.type_bytes == 1 else ">H"
                (number,) = struct.unpack_from(fmt, buf, 2)
                body = bytes(buf[2 + self.type_bytes:length])
                del buf[:length]
                return number, body
            if whole < start:
                raise ProtocolError(f"compressed block length {whole} shorter than its header")
            if len(buf) < whole:
                return None
            try:
                inflated = zlib.decompress(bytes(buf[start:whole]))
            except zlib.error as e:
                raise ProtocolError(f"bad compressed block: {e}") from None
            self.buffer = bytearray(inflated) + buf[whole:]
