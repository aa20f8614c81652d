"""The manual of a rule-variant game: the stored guide plus one sentence stating that game's rule.

A variant game (`nlmcs.games.civ.variants`) draws a sacred terrain from its seed; its manual is
the guide with one more sentence, in one of a few paraphrases also drawn from the seed, naming
that terrain. Only that sentence is parsed (with the project's spaCy pipeline) and appended to
the guide's tables, as section `RULE_SECTION`; parsed sentences are cached in the process per
(variant, terrain, paraphrase), so a run parses each at most once and never the whole guide.

The *mismatched* manual states another seed's rule (another sacred terrain drawn from the seed,
the same paraphrase), so its words differ from the matched one's in the terrain alone.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np

from manual_pipeline.store import StoredManual, validate_name
from nlmcs.errors import UserInputError
from nlmcs.games.civ.variants import SACRED, SACRED_END, mismatched_terrain

RULE_SECTION = "This game's rule"
PARAPHRASE_SALT = 0x9A7A
PARAPHRASES: dict[str, tuple[str, ...]] = {
    SACRED: (
        "In this game {t} land is sacred: a city founded on {t} starts with two extra citizens.",
        "Build your cities on {t}, because in this game a city founded on {t} begins with two "
        "more citizens.",
        "In this game a new city on {t} gets two extra citizens at once, since {t} land is "
        "sacred.",
        "Settlers who build a city on sacred {t} land give that city two extra citizens from "
        "the start in this game.",
    ),
    SACRED_END: (
        "In this game {t} land is sacred: each city on {t} is worth three extra points when "
        "the game ends.",
        "Build your cities on {t}, because in this game every city on {t} adds three points to "
        "your score at the end of the game.",
        "In this game every city you own on {t} at the end of the game scores three extra "
        "points, since {t} land is sacred.",
        "Settlers who build a city on sacred {t} land earn three extra points for each such "
        "city when this game ends.",
    ),
}


def paraphrase_of(seed: int, variant: str) -> int:
    """Which paraphrase the game of `seed` states its rule in (its own salted draw)."""
    rng = np.random.default_rng([int(seed), PARAPHRASE_SALT])
    return int(rng.integers(len(PARAPHRASES[variant])))


def rule_sentence(variant: str, terrain: str, paraphrase: int) -> str:
    if variant not in PARAPHRASES:
        raise UserInputError(f"game variant {variant!r} has no rule sentence "
                             f"(known: {', '.join(PARAPHRASES)})")
    return PARAPHRASES[variant][paraphrase].format(t=terrain)


@dataclasses.dataclass(frozen=True)
class GameRule:
    """What the manual of one variant game states."""

    variant: str
    seed: int
    terrain: str
    """The terrain the sentence names (the sacred one, or another for the mismatched manual)."""
    sacred: str
    """The game's real sacred terrain."""
    paraphrase: int

    @property
    def sentence(self) -> str:
        return rule_sentence(self.variant, self.terrain, self.paraphrase)


def game_rule(game, seed: int, *, mismatched: bool = False) -> GameRule:
    """The rule sentence of the game of `seed` (`game`: a variant `CivGame`)."""
    variant = getattr(getattr(game, "config", None), "variant", "")
    if not variant:
        raise UserInputError("a rule sentence needs a variant game (--variant)")
    m, _ = game.map_for_seed(int(seed))
    names = game.tables.terrain_names
    shown = mismatched_terrain(game.tables, m, seed) if mismatched else m.sacred
    return GameRule(variant, int(seed), names[shown], names[m.sacred],
                    paraphrase_of(seed, variant))


@lru_cache(maxsize=128)
def _parsed(variant: str, terrain: str, paraphrase: int):
    """(text, token columns) of one rule sentence, parsed as one sentence."""
    from manual_pipeline.parse import Batch, _add_sentence, load_model

    text = rule_sentence(variant, terrain, paraphrase)
    doc = load_model()(text)
    batch = Batch()
    _add_sentence(batch, 0, RULE_SECTION, doc[:])  # the whole text, one sentence
    return text, batch.tokens


def with_rule(manual: StoredManual, rule: GameRule) -> StoredManual:
    """`manual` with the rule sentence appended (a new last sentence), in memory; named
    `NAME.VARIANT.TERRAIN.K` so its seeded twins are stored apart from the guide's."""
    import pandas as pd

    text, columns = _parsed(rule.variant, rule.terrain, rule.paraphrase)
    sid = len(manual.sentences)
    sentence = pd.DataFrame({"sentence_id": [sid], "section": [RULE_SECTION], "text": [text]})
    tokens = pd.DataFrame(columns).assign(sentence_id=sid)
    sentences = pd.concat([manual.sentences, sentence.astype(manual.sentences.dtypes.to_dict())],
                          ignore_index=True)
    tokens = pd.concat([manual.tokens, tokens.astype(manual.tokens.dtypes.to_dict())],
                       ignore_index=True)
    name = validate_name(f"{manual.name}.{rule.variant}.{rule.terrain}.{rule.paraphrase}")
    meta = {key: value for key, value in manual.meta.items() if key != "files"}
    meta.update(name=name, counts={**manual.meta.get("counts", {}),
                                   "sentences": len(sentences), "tokens": len(tokens)},
                variant={"variant": rule.variant, "terrain": rule.terrain,
                         "paraphrase": rule.paraphrase, "sentence": text, "base": manual.name})
    return StoredManual(name, manual.directory, meta, sentences, tokens)


def game_manual(manual: StoredManual, game, seed: int, *, mismatched: bool = False
                ) -> StoredManual:
    """The manual the text methods read in the variant game of `seed` (or its mismatched
    control)."""
    return with_rule(manual, game_rule(game, seed, mismatched=mismatched))


def text_for_game(manual, game, seed: int, reads: str, *, twin_seed: int | None = None):
    """What a method that `reads` ("nothing", "manual", "random-twin", "mismatched") reads in
    the game of `seed`: in a variant game, the matched manual, its word-permuted twin (shuffled
    with `twin_seed`, by default the game's seed) or the mismatched manual; in a plain game,
    `manual` itself (the mismatched manual needs a variant)."""
    from nlmcs.model.manuals import random_twin, resolve_manual, unrelated_text

    variant = getattr(getattr(game, "config", None), "variant", "")
    if reads == "nothing":
        return None
    if not variant:
        if reads == "mismatched":
            raise UserInputError("text-mismatched reads another game's rule: it needs a variant "
                                 "game (--variant)")
        return manual
    own = game_manual(resolve_manual(manual), game, seed, mismatched=reads == "mismatched")
    if reads == "random-twin":
        return random_twin(own, seed=seed if twin_seed is None else twin_seed)
    if reads == "unrelated":
        return unrelated_text(own)
    return own
