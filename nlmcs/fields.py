"""Fields of the config dataclasses, declared once: their allowed values, ranges and help.

A `Literal` annotation is a field's list of choices, `option(default, low=..., high=...)` gives
its range, its attribute docstring is its help. Each config's `__post_init__` calls
`check_fields`, so a library caller gets the checks the command line gets (`ModelConfig(
hidden_update="relase")` is one `UserInputError` naming the field, not a silent default), and
`field_specs` tells the command line (`nlmcs.commands.options`) and config files
(`nlmcs.commands.config_file`) what each field takes: adding an option is adding a field.
"""

from __future__ import annotations

import ast
import math
import numbers
import re
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from functools import cache
from pathlib import Path

from nlmcs.errors import UserInputError

MAX_GAMES = 100_000
"""Most games one run asks for (per method): every command plans its games before playing them,
and 10**9 of them is gigabytes before the first game; 10**5 games of a minute each are already
two months of one process."""
MAX_SEED = 2**32 - 1
"""Seeds are non-negative (numpy's SeedSequence refuses negative ones) and fit 32 bits."""


@dataclass(frozen=True)
class Range:
    """Closed bounds [low, high] (either may be open-ended), or `above`: strictly greater."""

    low: float | None = None
    high: float | None = None
    above: float | None = None

    def __contains__(self, value) -> bool:
        return not ((self.low is not None and value < self.low)
                    or (self.high is not None and value > self.high)
                    or (self.above is not None and value <= self.above))  # fmt: skip

    def __str__(self) -> str:
        low, high, above = (_show(x) for x in (self.low, self.high, self.above))
        if self.above is not None:
            return f"greater than {above}" + (f" and at most {high}" if high else "")
        if low and high:
            return f"between {low} and {high}"
        return f"at least {low}" if low else (f"at most {high}" if high else "any value")


def _show(x) -> str | None:
    return None if x is None else (f"{x:g}" if isinstance(x, float) else str(x))


def option(default=MISSING, *, low=None, high=None, above=None, default_factory=MISSING,
           set_by: str | None = None):
    """A dataclass field with its range; `set_by` names what sets a field that is no option of
    its own (`kind` is set by the method, `opponent` by `--opponent`)."""
    metadata = {"range": Range(low, high, above) if (low, high, above) != (None,) * 3 else None,
                "set_by": set_by}
    return field(default=default, default_factory=default_factory, metadata=metadata)


@dataclass(frozen=True)
class FieldSpec:
    """What one config field takes, read from its annotation, its `option` and its docstring."""

    name: str
    kind: type
    """bool, int, float, str, Mapping (names to numbers; `types` (Mapping, object): to plain
    values), tuple (of one kind, `types[0]`) or a config dataclass (checked by itself)."""
    types: tuple[type, ...]
    """Types a value of kind str may have (`str`, or `str` and `Path`); a tuple's item type."""
    optional: bool
    """None is allowed."""
    choices: tuple | None
    range: Range | None
    default: object
    """The dataclass default (MISSING where a factory makes it)."""
    doc: str
    set_by: str | None

    def check(self, value):
        """(value as stored, problem or None): ints and floats normalised (an int given for a
        float becomes a float, so configs that compare equal also serialise alike)."""
        if value is None and self.optional:
            return value, None
        if self.choices is not None:
            ok = isinstance(value, str) and value in self.choices
            shown = ", ".join(str(c) if c != "" else '""' for c in self.choices)
            return value, None if ok else f"choose from {shown}"
        if value is None:
            return value, f"must be {self.expects()}"
        if self.kind is bool:
            return value, None if isinstance(value, bool) else "must be true or false"
        if self.kind is tuple:
            return self._items(value)
        if self.kind in (int, float):
            return self._number(value)
        if self.kind is Mapping and object in self.types:
            ok = isinstance(value, Mapping) and all(
                isinstance(k, str) and _plain(v) for k, v in value.items())
            return value, None if ok else "must map names to strings, numbers or true/false"
        if self.kind is Mapping:
            ok = isinstance(value, Mapping) and all(
                isinstance(k, str) and _real(v) and math.isfinite(v) for k, v in value.items())
            if not ok:
                return value, "must map names to finite numbers"
            return {k: float(v) for k, v in value.items()}, None
        ok = isinstance(value, self.types)
        return value, None if ok else f"must be {self.expects()}"

    def _items(self, value):
        """A tuple of items of one kind, each checked as a field of that kind (and range)."""
        if not isinstance(value, tuple | list):
            return value, f"must be {self.expects()}"
        item = FieldSpec(self.name, self.types[0], self.types, False, None, self.range,
                         MISSING, "", None)
        out = []
        for x in value:
            stored, problem = item.check(x)
            if problem is not None:
                return value, f"must be {self.expects()} ({x!r}: {problem})"
            out.append(stored)
        out = tuple(out)
        return (value if out == value else out), None

    def _number(self, value):
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                return value, f"must be {self.expects()}"
            value = int(value)
        else:
            if not _real(value):
                return value, f"must be {self.expects()}"
            value = float(value)
            if not math.isfinite(value):
                return value, f"must be {self.expects()}"
        if self.range is not None and value not in self.range:
            return value, f"must be {self.range}"
        return value, None

    def expects(self) -> str:
        """What a value must be, in words ("an integer at least 1", "a finite number ...")."""
        kinds = {bool: "true or false", int: "an integer", float: "a finite number",
                 Mapping: "a table of names to numbers"}
        if self.kind is tuple:
            item = {int: "integers", float: "finite numbers"}.get(self.types[0], "strings")
            return f"a list of {item}" + (f" {self.range}" if self.range is not None else "")
        what = kinds.get(self.kind, "a string" if self.kind is str else
                         f"a {getattr(self.kind, '__name__', self.kind)}")
        if self.range is not None:
            what += f" {self.range}"
        return what + (" or none" if self.optional else "")


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _plain(value) -> bool:
    """A value a JSON table holds as it is: none, true/false, a string or a finite number."""
    return value is None or isinstance(value, bool | str) or (_real(value)
                                                              and math.isfinite(value))


def check_fields(config, label: str) -> None:
    """Refuse a config whose field holds a value its declaration does not allow, with one
    `UserInputError` line ("model option hidden_update='relase': choose from release, ...");
    numbers are stored normalised (see `FieldSpec.check`)."""
    for spec in field_specs(type(config)):
        value = getattr(config, spec.name)
        stored, problem = spec.check(value)
        if problem is not None:
            raise UserInputError(f"{label} {spec.name}={value!r}: {problem}")
        if stored is not value:
            object.__setattr__(config, spec.name, stored)  # frozen: set once, here


@cache
def field_specs(cls) -> tuple[FieldSpec, ...]:
    """The specs of a config dataclass's fields, in declaration order (read once per class)."""
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    out = []
    for f in fields(cls):
        kind, accepted, optional, choices = _read_hint(hints[f.name])
        out.append(FieldSpec(name=f.name, kind=kind, types=accepted, optional=optional,
                             choices=choices, range=f.metadata.get("range"), default=f.default,
                             doc=docs.get(f.name, ""), set_by=f.metadata.get("set_by")))
    return tuple(out)


def _read_hint(hint) -> tuple[type, tuple[type, ...], bool, tuple | None]:
    """(kind, accepted types, optional, choices) of an annotation: `Literal[...]`, `X | None`,
    `Mapping[str, float]`, `Mapping[str, object]`, `tuple[T, ...]`, a config dataclass, `str |
    Path`, `int`, `float`, `bool`."""
    args, optional = (hint,), False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = tuple(a for a in typing.get_args(hint) if a is not type(None))
        optional = len(args) < len(typing.get_args(hint))
    first = args[0]
    if typing.get_origin(first) is tuple:
        item, *rest = typing.get_args(first)
        if rest != [Ellipsis] or item not in (int, float, str):
            raise TypeError(f"a tuple config field holds one kind, tuple[T, ...], not {hint!r}")
        return tuple, (item,), optional, None
    if typing.get_origin(first) is typing.Literal:
        choices = typing.get_args(first)
        return type(choices[0]), (type(choices[0]),), optional, choices
    if typing.get_origin(first) in (Mapping, dict):
        values = typing.get_args(first)[1:] or (float,)
        if values[0] not in (float, object):
            raise TypeError(f"a mapping config field maps str to float or object, not {hint!r}")
        return Mapping, (Mapping, *(() if values[0] is float else (object,))), optional, None
    if is_dataclass(first):  # a nested config, which checks its own fields
        return first, (first,), optional, None
    if not all(isinstance(a, type) for a in args) or first not in (bool, int, float, str):
        raise TypeError(f"config fields take bool, int, float, str (or Path), a Literal or a "
                        f"Mapping, not {hint!r}")
    assert all(a in (str, Path) for a in args[1:]), hint
    return first, args, optional, None


def field_docs(cls) -> dict[str, str]:
    """Attribute docstrings of a class (the string literal under each field), whitespace
    collapsed; read from its module's source, which the wheel ships."""
    try:
        source = Path(sys.modules[cls.__module__].__file__).read_text(encoding="utf-8")
    except (OSError, TypeError):  # no source (a frozen app): the options go without help
        return {}
    body = next((node.body for node in ast.parse(source).body
                 if isinstance(node, ast.ClassDef) and node.name == cls.__name__), [])
    docs = {}
    for node, after in zip(body, body[1:], strict=False):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def summary(doc: str) -> str:
    """A docstring's first sentence, the help line of its option."""
    return re.split(r"(?<=\.)\s+(?=[A-Z(])", doc, maxsplit=1)[0]


def without_later(values: Mapping, later: Mapping) -> dict:
    """`values` without the fields added after runs were recorded that still hold the value
    that plays as before (`later`: name -> that value): a recorded run's identity, which never
    held them, still matches while they are left at it."""
    return {k: v for k, v in values.items() if k not in later or v != later[k]}
