from manual_pipeline.store import STOP_WORDS, stem
from manual_pipeline.words import is_punctuation


def test_fifty_lower_case_stop_words_without_game_words():
    assert len(STOP_WORDS) == 50
    assert all(w == w.lower() for w in STOP_WORDS)
    for game_word in ("build", "city", "move", "attack", "not", "settlers"):
        assert game_word not in STOP_WORDS


def test_stem_lower_cases_and_stems():
    assert stem("Cities") == stem("city") == "citi"
    assert stem("Irrigate") == stem("irrigation")
    assert stem("SETTLERS") == "settler"


def test_punctuation_means_no_letter_or_digit():
    assert is_punctuation(".") and is_punctuation("--") and is_punctuation("%")
    assert not is_punctuation("'s") and not is_punctuation("3")
