"""A loaded corpus with its similarity indexes and naive-Bayes model, shared by a process.

Building an index or fitting the naive-Bayes model takes seconds, so a process keeps one bundle
per stored corpus and version (the mtime of its meta.json) and builds each part on first use;
many games in one worker then share them.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from corpus.live import corpus_similarity
from corpus.shipped import SAMPLE_CORPUS, find_corpus_dir
from corpus.similarity import CorpusSimilarity, SimilarityConfig
from corpus.store import StoredCorpus, load_corpus
from nlmcs.errors import UserInputError

if TYPE_CHECKING:
    from corpus.naive_bayes import NaiveBayesActionModel

DEFAULT_CORPUS = SAMPLE_CORPUS


class CorpusBundle:
    def __init__(self, corpus: StoredCorpus) -> None:
        self.corpus = corpus
        self._similarity: dict[SimilarityConfig, CorpusSimilarity] = {}
        self._naive_bayes: NaiveBayesActionModel | None = None

    def similarity(self, config: SimilarityConfig) -> CorpusSimilarity:
        if config not in self._similarity:
            sim = corpus_similarity(self.corpus, config)
            sim.build()
            self._similarity[config] = sim
        return self._similarity[config]

    def naive_bayes(self) -> NaiveBayesActionModel:
        if self._naive_bayes is None:
            from corpus.naive_bayes import NaiveBayesActionModel, NaiveBayesConfig

            table = self.corpus.decisions
            applied = table["applied"].to_numpy()
            self._naive_bayes = NaiveBayesActionModel(NaiveBayesConfig()).fit(
                self.corpus.states[applied], table["agent_label"].to_numpy()[applied],
                table["action_key"].to_numpy()[applied])
        return self._naive_bayes


@lru_cache(maxsize=4)
def _bundle_at(directory: str, stamp: float) -> CorpusBundle:
    return CorpusBundle(load_corpus(directory))


def recorded_corpus(corpus: str | Path | None) -> Path:
    """The folder of a stored corpus by name or directory (None: `DEFAULT_CORPUS`); one line
    saying how to record it where there is none."""
    directory = find_corpus_dir(corpus or DEFAULT_CORPUS)
    if not (directory / "meta.json").exists():
        raise UserInputError(f"no corpus at {directory}; record one first, e.g. `nlmcs corpus "
                             f"record --games 200 --name {directory.name}`")
    return directory


def corpus_bundle(corpus: str | Path | StoredCorpus | None) -> CorpusBundle:
    """Bundle for a name, a directory or a `StoredCorpus` (None: `DEFAULT_CORPUS`, which ships
    with the project); a stored one is loaded once per process and version."""
    if isinstance(corpus, StoredCorpus):
        return CorpusBundle(corpus)
    directory = recorded_corpus(corpus)
    return _bundle_at(str(directory.resolve()), os.stat(directory / "meta.json").st_mtime)


def check_compatible(corpus: StoredCorpus, game) -> None:
    """The corpus's vectors must mean what the live game's do: same game, same ruleset (for a
    game that has one), same feature list."""
    if corpus.meta["game"] != game.name:
        raise UserInputError(f"corpus {corpus.name} holds {corpus.meta['game']!r} games, not "
                             f"{game.name!r}")
    ruleset = getattr(game, "ruleset", None)
    name, sha = getattr(ruleset, "name", None), getattr(ruleset, "sha256", None)
    recorded = {str(s) for s in corpus.games.get("ruleset_sha256", []) if s}
    if name is not None and corpus.meta["ruleset"] != name:
        differs = f"ruleset {corpus.meta['ruleset']!r}, not this game's {name!r}"
    elif sha and recorded and recorded != {sha}:
        differs = f"another version of ruleset {name!r} (sha256 {sorted(recorded)[0][:12]}, " \
                  f"this game's {sha[:12]})"
    else:
        differs = None
    if differs:
        raise UserInputError(f"corpus {corpus.name} was recorded with {differs}; record one "
                             "with this game's ruleset")
    if corpus.feature_names != list(game.state_feature_names()):
        raise UserInputError(f"corpus {corpus.name} was recorded with other state features than "
                             "this game has; record it again with this version of the game")
