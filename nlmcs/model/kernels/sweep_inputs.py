"""What the compiled sweeps (`nlmcs.model.kernels.sweeps`) take: a roll-out's rows as
`nlmcs.model.batch` lays them out, the learning constants and the weight tables, each a named
tuple numba passes field by field. A module of its own, free of numba, so the batch can build
them without loading the kernels.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Rates(NamedTuple):
    """The constants of one roll-out's sweeps (built by `nlmcs.model.learner`)."""

    passes: int
    target: float  # the reward R the output layer learns (R - b under `ModelConfig.center`)
    rule: int  # RELEASE or CONSISTENT (the expected rule has its own sweeps)
    alpha: float  # learning rate of w
    l2: float  # L2 penalty of w
    h_alpha: float  # learning rate of u and v
    h_l2: float  # L2 penalty of u and v
    temperature: float  # of the hidden softmax layers


RELEASE, CONSISTENT = 0, 1
"""`Rates.rule`: the hidden layers' factor k = (Q - R) Q (the 2011 release) or (R - Q) Q."""


class Tables(NamedTuple):
    """The weight tables, which the sweeps change in place."""

    u: np.ndarray
    v: np.ndarray
    w: np.ndarray


class OutputRows(NamedTuple):
    """f of every datapoint, as sparse entries."""

    slot: np.ndarray  # (E,) w slots
    val: np.ndarray  # (E,) values
    row: np.ndarray  # (E,) datapoint of each entry
    n: int  # D datapoints


class Candidates(NamedTuple):
    """Where each datapoint's candidate rows lie among all R rows (datapoint after datapoint):
    C + 1 per datapoint (its candidate sentences and NULL), or its latent states."""

    row_owner: np.ndarray  # (R,) datapoint of each row
    row_start: np.ndarray  # (D,) first row of each datapoint
    chosen_row: np.ndarray  # (D,) the row its sampled y is


class Phi(NamedTuple):
    """phi of every candidate row, entry by entry (the `expected` rule's sweeps)."""

    slot: np.ndarray
    val: np.ndarray
    row: np.ndarray  # (entries,) candidate row among all R rows


class SharedPhi(NamedTuple):
    """phi of every candidate row with the word features of each candidate set and action type
    stored once: the datapoints that share them (an agent deciding again, or another agent of
    its kind) share those rows' values, so a sweep scores and moves them once per set rather
    than once per datapoint. Each datapoint keeps its own entries (overlap counts, NULL)."""

    slot: np.ndarray | None  # the sets' word entries, set after set (None: left out, shipped)
    val: np.ndarray | None
    row: np.ndarray | None  # candidate row of each entry within its set
    start: np.ndarray  # (G+1,) first entry of each set
    first_row: np.ndarray  # (G,) first row of each set among all sets' rows
    owner_set: np.ndarray  # (D,) set of each datapoint
    own_slot: np.ndarray  # the datapoints' own entries
    own_val: np.ndarray
    own_row: np.ndarray  # their rows among all R rows


class Labels(NamedTuple):
    """psi of the words of the sentences the datapoints drew, word after word: 3 label rows
    per word, each its 7 static slots, its parent label's slot and the slots of the flags it
    has, all value 1 (`FeatureRows.label_rows`; `FeatureRows.psi_entries` spells them out)."""

    static: np.ndarray  # (Wz, 3, 7) static v slots under each label
    parent: np.ndarray  # (Wz,) the parent's drawn label, ROOT under the root
    flags: np.ndarray  # (Wz, 3) bool: state / unit / action word
    owner: np.ndarray  # (Wz,) datapoint of each word
    label: np.ndarray  # (Wz,) its drawn label
    flag_slots: np.ndarray  # (3, 3) v slots of each flag under each label
    plabel_slots: np.ndarray  # (4, 3) v slots of each parent label under each label


class RowQ(NamedTuple):
    """The weight-free terms of every candidate row's Q with the labels in expectation (the
    reference's `row_q`), so the `expected` sweeps rescore all of a roll-out's rows in one call
    per pass: a signature the roll-out holds several times is scored once (its distinct rows)."""

    row_src: np.ndarray  # (R,) distinct row each candidate row reads
    row_sig: np.ndarray  # (Ru,) distinct signature of each distinct row
    game_slot: np.ndarray  # game feature slots of the distinct signatures
    game_owner: np.ndarray  # their signature
    lang_slot: np.ndarray  # language (or latent) output entries of the distinct rows
    lang_val: np.ndarray
    lang_row: np.ndarray
    pred_slot: np.ndarray  # predicate entries, 2 per candidate word (labels action, state)
    pred_val: np.ndarray
    pred_idx: np.ndarray  # 2 word + label of each entry
    word_row: np.ndarray  # (Wc,) distinct row of each candidate word
    parent: np.ndarray  # (Wc,) parent word, -1 under the root
    order: np.ndarray  # (Wc,) the words, parents first
    static: np.ndarray  # (K, 3, 7) v slots of each distinct (manual word, flags)
    flags: np.ndarray  # (K, 3) its flags
    pair: np.ndarray  # (Wc,) distinct (word, flags) of each candidate word


class RowSlots(NamedTuple):
    """A configuration's slots and switches the update rows read beside the tables
    (`kernels.update_rows`; `FeatureRows` makes them)."""

    labels: bool  # the text kind: a label layer (drawn labels add predicate rows)
    grounding: bool  # the grounding matches are output features
    overlap_state: bool
    meaning: bool
    overlap_slot: int
    overlap_state_slot: int
    meaning_slot: int
    meaning_state_slot: int
    null_slots: np.ndarray  # (2,)
    match_slots: np.ndarray  # (2,)
