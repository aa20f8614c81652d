"""Which manual a text model reads: a stored manual by name or directory, or one in memory.

`random-text` reads the word-permuted twin of the manual (`<name>-random`, or with a seed
`<name>-random-SEED`, as an ablation draws one per game); shipped manuals and their twins are
built on first use (`manual_pipeline.shipped`, `manual_pipeline.twins`). `unrelated-text` reads
shipped English prose of the manual's length (`manual_pipeline.unrelated`), checked here to share
few of the game's words.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from manual_pipeline.store import StoredManual
from nlmcs.model.features import ManualIndex

DEFAULT_MANUAL = "civ-guide"
UNRELATED_MAX_GAME_WORDS = 0.25
"""The unrelated control may use at most this fraction of the manual's game words per sentence:
a text that speaks of the game is no control for meaning."""

ManualRef = str | Path | StoredManual | None
"""A stored manual's name or directory, a `StoredManual`, or None for `DEFAULT_MANUAL`."""


def resolve_manual(manual: ManualRef) -> StoredManual:
    if isinstance(manual, StoredManual):
        return manual
    from manual_pipeline.shipped import load_or_build

    return load_or_build(manual if manual is not None else DEFAULT_MANUAL)


def random_twin(manual: ManualRef, *, seed: int | None = None) -> ManualRef:
    """The word-permuted twin of a manual given by name, directory or `StoredManual`.

    Without `seed`: a name or directory maps to the stored twin (built on first use for a
    shipped or stored manual named by name); a `StoredManual` whose twin is not stored beside
    it is shuffled in memory with seed 0. With `seed`: the twin shuffled with it, by name
    (`NAME-random-SEED`) for a name, else in memory (`manual_pipeline.twins`). A twin is its
    own twin.
    """
    if seed is not None:
        from manual_pipeline.twins import seeded_name, seeded_twin

        if manual is None or (isinstance(manual, str) and "/" not in manual):
            return seeded_name(manual or DEFAULT_MANUAL, seed)
        manual = resolve_manual(manual if isinstance(manual, StoredManual) else Path(manual))
        return manual if _is_twin(manual) else seeded_twin(manual, seed)
    if manual is None or isinstance(manual, str):
        return f"{manual or DEFAULT_MANUAL}-random"
    if not isinstance(manual, StoredManual):
        directory = Path(manual)
        return directory.with_name(directory.name + "-random")
    if _is_twin(manual):
        return manual
    stored = Path(manual.directory).parent / f"{manual.name}-random"
    if (stored / "meta.json").is_file():
        return stored
    from manual_pipeline.shuffle import shuffle_tokens

    return dataclasses.replace(
        manual, name=manual.name + "-random", tokens=shuffle_tokens(manual.tokens, seed=0)
    )


def unrelated_text(manual: ManualRef) -> StoredManual:
    """The unrelated-text control of `manual` (itself if it is one), refused in one line where
    it cannot be built: the shipped text is shorter than the manual, or uses too many of the
    game's words next to it (`check_unrelated`)."""
    from manual_pipeline.unrelated import UNRELATED_NAME, is_unrelated, unrelated_control

    stored = resolve_manual(manual)
    if is_unrelated(stored):
        return stored
    control = unrelated_control(stored, resolve_manual(UNRELATED_NAME))
    check_unrelated(stored, control)
    return control


def check_unrelated(manual: StoredManual, control: StoredManual) -> None:
    """Refuse a control whose game words per sentence (the civ game's action, unit and terrain
    words, `nlmcs.advice.readability`) exceed `UNRELATED_MAX_GAME_WORDS` of the manual's."""
    from nlmcs.advice.readability import game_words, measures
    from nlmcs.errors import UserInputError
    from nlmcs.games import make_game
    from nlmcs.games.civ.labels import vocabulary

    actions, states = game_words(vocabulary(make_game("civ").tables))
    own = measures(manual, actions, states)["game_words_per_sentence"]
    other = measures(control, actions, states)["game_words_per_sentence"]
    if other > UNRELATED_MAX_GAME_WORDS * own:
        raise UserInputError(
            f"unrelated-text: {control.name} uses {other:.2f} game words a sentence against "
            f"{own:.2f} in {manual.name}; an unrelated control may use at most "
            f"{UNRELATED_MAX_GAME_WORDS:.0%} of the manual's (is the manual itself about the "
            "game?)")


def text_read(manual: ManualRef, reads: str, *, twin_seed: int | None = None) -> ManualRef:
    """What a method that `reads` ("manual", "random-twin", "unrelated") reads of `manual`: the
    manual, its word-permuted twin (of `twin_seed`, else the stored one) or its unrelated
    control. The mismatched manual of a variant game is `variant_manuals.text_for_game`'s."""
    if reads == "random-twin":
        return random_twin(manual, seed=twin_seed)
    if reads == "unrelated":
        return unrelated_text(manual)
    return manual


def _is_twin(manual: StoredManual) -> bool:
    return manual.name.endswith("-random") or manual.meta.get("random") is not None


def load_index(manual: ManualRef, *, min_count: int, meaning: bool = False) -> ManualIndex:
    """The model's view of a manual (kept words, parse tree, candidate lookup; with `meaning`
    its sentences' pretrained vectors)."""
    return ManualIndex.build(resolve_manual(manual), min_count=min_count, meaning=meaning)
