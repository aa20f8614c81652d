"""Reads FreeCiv's `packets.def`: packet numbers, flags and typed fields.

The file's grammar: `type ALIAS = SRC` lines (SRC an alias or `dataio(public)`), and packets
`PACKET_NAME = number; flags` ... `end`, each field line `TYPE name[, name...]; flags` with zero to
two array dimensions `[full]` or `[full:count]` (count: a field sent earlier in the packet).
Fields marked `add-cap(c)` exist only when the connection has capability c, `remove-cap(c)`
only when it has not; the caller's capability set picks them once, here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from nlmcs.errors import UserInputError
from nlmcs.games.freeciv.constants import BITVECTOR_BYTES, CAPABILITY, SIZES


@dataclass(frozen=True)
class Field:
    name: str
    dataio: str  # uint8, sint16, bool8, string, bitvector, ufloat, requirement, ...
    public: str  # the C type in parentheses: int, bool, float, char, bv_extras, ...
    dims: tuple[tuple[int, int | str], ...] = ()  # (full size, transferred: int or field name)
    key: bool = False
    diff: bool = False
    float_factor: int = 0
    bv_bytes: int = 0

    @property
    def is_bool(self) -> bool:
        return self.public == "bool"

    @property
    def is_string(self) -> bool:
        return self.dataio in ("string", "estring")

    @property
    def array_dims(self) -> tuple:
        """Dimensions that repeat the value (a string's last dimension is its buffer size;
        a memory field's only dimension is its byte count)."""
        if self.is_string or self.dataio == "memory":
            return self.dims[:-1]
        return self.dims


@dataclass(frozen=True)
class Packet:
    name: str
    number: int
    flags: frozenset[str]
    fields: tuple[Field, ...]
    cancel: tuple[str, ...] = ()

    @property
    def delta(self) -> bool:
        return "no-delta" not in self.flags

    @property
    def keys(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.key)

    @property
    def others(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if not f.key)


@dataclass
class Protocol:
    packets: dict[str, Packet] = field(default_factory=dict)
    by_number: dict[int, Packet] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Packet:
        return self.packets[name]


_COMMENTS = re.compile(r"/\*.*?\*/", re.S)
_HEADER = re.compile(r"^(PACKET_\w+)\s*=\s*(\d+)\s*;?\s*(.*)$")
_BASIC = re.compile(r"^(\w+)\((.+)\)$")
_FLOAT = re.compile(r"^([us])float(\d+)$")


def parse(text: str, *, capabilities: str = CAPABILITY, source: str = "packets.def") -> Protocol:
    caps = set(capabilities.split())
    aliases: dict[str, str] = {}
    proto = Protocol()
    current: tuple | None = None  # (name, number, flags, cancel, fields)
    for lineno, raw in enumerate(_strip_comments(text).splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        try:
            if current is None:
                if line.startswith("type "):
                    alias, _, src = line[5:].partition("=")
                    aliases[alias.strip()] = src.strip()
                    continue
                m = _HEADER.match(line)
                if not m:
                    raise ValueError(f"unexpected line {line!r}")
                flags, cancel = _packet_flags(m.group(3))
                current = (m.group(1), int(m.group(2)), flags, cancel, [])
            elif line == "end":
                name, number, flags, cancel, fields = current
                pkt = Packet(name, number, frozenset(flags), tuple(fields), tuple(cancel))
                proto.packets[name] = pkt
                proto.by_number[number] = pkt
                current = None
            else:
                current[4].extend(_field_line(line, aliases, caps))
        except (ValueError, KeyError) as e:
            raise UserInputError(f"{source}: line {lineno}: {e}") from None
    if current is not None:
        raise UserInputError(f"{source}: packet {current[0]} has no `end`")
    if not proto.packets:
        raise UserInputError(f"{source}: no packet definitions")
    return proto


def load(path: Path | str, *, capabilities: str = CAPABILITY) -> Protocol:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise UserInputError(f"{path}: cannot read ({e.strerror})") from None
    return parse(text, capabilities=capabilities, source=str(path))


def _strip_comments(text: str) -> str:
    text = _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out = []
    for line in text.splitlines():
        line = line.split("//", 1)[0]
        out.append(line.split("#", 1)[0])
    return "\n".join(out)


def _packet_flags(text: str) -> tuple[list[str], list[str]]:
    flags, cancel = [], []
    for flag in (f.strip() for f in re.split(r",(?![^(]*\))", text) if f.strip()):
        m = re.match(r"cancel\((\w+)\)$", flag)
        if m:
            cancel.append(m.group(1))
        else:
            flags.append(flag)
    return flags, cancel


def _resolve(type_name: str, aliases: dict[str, str]) -> tuple[str, str]:
    seen = set()
    while type_name in aliases:
        if type_name in seen:
            raise ValueError(f"type alias loop at {type_name}")
        seen.add(type_name)
        type_name = aliases[type_name]
    m = _BASIC.match(type_name)
    if not m:
        raise ValueError(f"unknown type {type_name!r}")
    return m.group(1), m.group(2).strip()


def _size(expr: str) -> int:
    """An array size: a number or an expression of known constants (`A_LAST + 1`)."""
    if not re.fullmatch(r"[\w\s+\-*/()]+", expr) or re.search(r"\w\s+\w", expr):
        raise ValueError(f"bad array size {expr!r}")
    tokens = re.findall(r"\w+|[-+*/()]", expr)
    out = []
    for t in tokens:
        if t.isdigit() or t in "+-*/()":
            out.append("//" if t == "/" else t)
        elif t in SIZES:
            out.append(str(SIZES[t]))
        else:
            raise ValueError(f"unknown constant {t!r} in array size {expr!r}")
    try:
        return int(eval("".join(out), {"__builtins__": {}}))  # digits and operators only
    except (SyntaxError, ZeroDivisionError):
        raise ValueError(f"bad array size {expr!r}") from None


def _field_line(line: str, aliases: dict[str, str], caps: set[str]) -> list[Field]:
    decl, _, flag_text = line.partition(";")
    flags = [f.strip() for f in flag_text.split(",") if f.strip()]
    for flag in flags:
        m = re.match(r"(add|remove)-cap\((\w+)\)$", flag)
        if m and (m.group(2) in caps) != (m.group(1) == "add"):
            return []
    type_name, _, names = decl.strip().partition(" ")
    dataio, public = _resolve(type_name.strip(), aliases)
    factor = 0
    m = _FLOAT.match(dataio)
    if m:
        dataio, factor = m.group(1) + "float", int(m.group(2))
    bv_bytes = 0
    if dataio == "bitvector":
        if public not in BITVECTOR_BYTES:
            raise ValueError(f"unknown bit vector {public!r}")
        bv_bytes = BITVECTOR_BYTES[public]
    fields = []
    for name in (n.strip() for n in names.split(",")):
        dims = []
        for full, _, count in re.findall(r"\[([^]:]+)(:([^]]+))?\]", name):
            count = count.strip()
            if not count:
                transfer = _size(full)
            elif re.fullmatch(r"[a-z_]\w*", count):
                transfer = count
            else:
                transfer = _size(count)
            dims.append((_size(full), transfer))
        fields.append(Field(
            name=name.split("[", 1)[0].strip(), dataio=dataio, public=public, dims=tuple(dims),
            key="key" in flags, diff="diff" in flags, float_factor=factor, bv_bytes=bv_bytes,
        ))  # fmt: skip
    return fields
