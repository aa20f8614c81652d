"""A manual's advice written as data: rules in the game's own words, checked against the manual.

A rules file (TOML, beside its manual: `data/manuals/civ-guide.advice.toml`) holds `[[rule]]`
tables. Each rule quotes the sentences it comes from, names the agents it speaks to, the
situation (state labels of the agent, and of its civilization) and what it recommends doing
(`do`) or not doing (`avoid`), all in the labels of `nlmcs.games.civ.labels`. Writing advice this
way makes it testable without a reader: `nlmcs.advice.policy` turns a rule into "follow it" and
"break it" versions of a scripted player, and the audit plays them on paired seeds.

Keys of a rule: name, sentences, agent; optionally when (every label present), when_any (at
least one), unless (none), civ_when / civ_unless (the same on the civilization's labels), do or
avoid (labels of the recommended or discouraged action; an action matches when it carries one of
them), instead (what a player breaking a `do` rule takes in its place, when legal), break_until
(break the rule only before this turn: "delay" rather than "never"), note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nlmcs.errors import UserInputError

MAX_RULES_BYTES = 1 << 20
RULE_KEYS = ("name", "sentences", "agent", "when", "when_any", "unless", "civ_when",
             "civ_unless", "do", "avoid", "instead", "break_until", "note")
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")


@dataclass(frozen=True)
class Rule:
    """One piece of advice, compiled from a rules file (see the module docstring)."""

    name: str
    sentences: tuple[str, ...]
    agent: frozenset[str]
    action: tuple[str, ...]
    """Labels of the action the rule is about (`do` or `avoid`), in preference order."""
    recommends: bool
    """True for `do` (follow = take it), False for `avoid` (follow = never take it)."""
    when: frozenset[str] = frozenset()
    when_any: frozenset[str] = frozenset()
    unless: frozenset[str] = frozenset()
    civ_when: frozenset[str] = frozenset()
    civ_unless: frozenset[str] = frozenset()
    instead: tuple[str, ...] = ()
    break_until: int | None = None
    note: str = ""

    def applies(self, agent_labels: Sequence[str], state_labels: Sequence[str],
                civ_labels: Sequence[str]) -> bool:
        """Whether the rule speaks to this agent in this situation."""
        if self.agent.isdisjoint(agent_labels):
            return False
        state = set(state_labels)
        if not self.when <= state or (self.when_any and self.when_any.isdisjoint(state)):
            return False
        if not self.unless.isdisjoint(state):
            return False
        civ = set(civ_labels)
        return self.civ_when <= civ and self.civ_unless.isdisjoint(civ)


@dataclass(frozen=True)
class RuleSet:
    """The rules of one file, with where they came from."""

    path: Path
    manual: str | None
    rules: tuple[Rule, ...]

    def get(self, names: Sequence[str]) -> tuple[Rule, ...]:
        """The rules named (all when `names` is empty); an unknown name is one error line."""
        if not names:
            return self.rules
        known = {r.name: r for r in self.rules}
        missing = [n for n in names if n not in known]
        if missing:
            raise UserInputError(f"{self.path}: no rule named {', '.join(missing)} (rules: "
                                 f"{', '.join(known)})")
        return tuple(known[n] for n in names)


def default_rules_path(manual_name: str) -> Path | None:
    """The shipped rules file of a shipped manual (`data/manuals/NAME.advice.toml`), if any."""
    from nlmcs.paths import shipped_dir

    path = shipped_dir() / "manuals" / f"{manual_name}.advice.toml"
    return path if path.is_file() else None


def normalise(text: str) -> str:
    return " ".join(str(text).split())


def load_rules(path: str | Path, *, vocabulary: Mapping[str, frozenset[str]],
               sentences: Sequence[str] | None = None) -> RuleSet:
    """Read and check a rules file: every label must be one the game gives (`vocabulary`, as
    `labels.vocabulary` returns it) and every quoted sentence one of the manual's `sentences`
    (when given). Anything wrong is one `UserInputError` naming the file and the rule."""
    from nlmcs.files import read_document

    path = Path(path)
    data = read_document(path, what="rules file", max_bytes=MAX_RULES_BYTES, toml=True)
    unknown = sorted(set(data) - {"manual", "rule"})
    if unknown:
        raise UserInputError(f"{path}: unknown top-level key {unknown[0]!r} (keys: manual, rule)")
    manual = data.get("manual")
    if manual is not None and not isinstance(manual, str):
        raise UserInputError(f"{path}: 'manual' must be a manual name")
    raw = data.get("rule")
    if not isinstance(raw, list) or not raw or not all(isinstance(r, dict) for r in raw):
        raise UserInputError(f"{path}: expected at least one [[rule]] table")
    known_sentences = None if sentences is None else {normalise(s) for s in sentences}
    rules, seen = [], set()
    for k, table in enumerate(raw, start=1):
        rule = _rule(table, f"{path}: rule {k}", vocabulary, known_sentences)
        if rule.name in seen:
            raise UserInputError(f"{path}: rule {k}: the name {rule.name!r} is used twice")
        seen.add(rule.name)
        rules.append(rule)
    return RuleSet(path, manual, tuple(rules))


def _rule(table: dict, where: str, vocabulary: Mapping[str, frozenset[str]],
          known_sentences: set[str] | None) -> Rule:
    unknown = sorted(set(table) - set(RULE_KEYS))
    if unknown:
        raise UserInputError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(RULE_KEYS)})")
    name = table.get("name")
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise UserInputError(f"{where}: 'name' must be 1-40 lower-case letters, digits or '-'")
    where = f"{where} ({name})"
    sentences = _words(table, "sentences", where, required=True)
    if known_sentences is not None:
        for s in sentences:
            if normalise(s) not in known_sentences:
                raise UserInputError(f"{where}: sentence not in the manual: {s[:80]!r}")
    if ("do" in table) == ("avoid" in table):
        raise UserInputError(f"{where}: give exactly one of 'do' and 'avoid'")
    recommends = "do" in table
    action = _words(table, "do" if recommends else "avoid", where, required=True,
                    allowed=vocabulary["action"], what="action label")
    instead = _words(table, "instead", where, allowed=vocabulary["action"], what="action label")
    if instead and not recommends:
        raise UserInputError(f"{where}: 'instead' goes with 'do' (breaking an 'avoid' rule "
                             "takes the avoided action)")
    break_until = table.get("break_until")
    if break_until is not None and (isinstance(break_until, bool) or not isinstance(
            break_until, int) or break_until < 1):
        raise UserInputError(f"{where}: 'break_until' must be a turn number of 1 or more")
    note = table.get("note", "")
    if not isinstance(note, str):
        raise UserInputError(f"{where}: 'note' must be text")

    def labels(key: str, kind: str) -> frozenset[str]:
        return frozenset(_words(table, key, where, allowed=vocabulary[kind],
                                what=f"{kind} label"))

    return Rule(name=name, sentences=sentences,
                agent=frozenset(_words(table, "agent", where, required=True,
                                       allowed=vocabulary["agent"], what="agent kind")),
                action=action, recommends=recommends, when=labels("when", "state"),
                when_any=labels("when_any", "state"), unless=labels("unless", "state"),
                civ_when=labels("civ_when", "state"), civ_unless=labels("civ_unless", "state"),
                instead=instead, break_until=break_until, note=note)  # fmt: skip


def _words(table: dict, key: str, where: str, *, required: bool = False,
           allowed: frozenset[str] | None = None, what: str = "") -> tuple[str, ...]:
    """A key holding one string or a list of strings, as a tuple; labels checked."""
    value = table.get(key)
    if value is None:
        if required:
            raise UserInputError(f"{where}: missing {key!r}")
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(
            isinstance(v, str) and v.strip() for v in value):
        raise UserInputError(f"{where}: {key!r} must be a string or a list of strings")
    if allowed is not None:
        for v in value:
            if v not in allowed:
                raise UserInputError(f"{where}: {key!r} names {v!r}: the game has no such {what}")
    return tuple(value)
