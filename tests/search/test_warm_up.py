"""A planner's first real step times the step, not numba loading or compiling machine code."""

import numba.core.dispatcher as dispatcher
import pytest

from nlmcs.experiments.play import make_player, play
from nlmcs.games import make_game
from nlmcs.model.config import ModelConfig
from nlmcs.search.config import SearchConfig


@pytest.mark.parametrize("preset", ["default", "selecting"])
def test_no_machine_code_is_loaded_or_compiled_after_the_planner_is_made(preset, monkeypatch):
    game = make_game("civ", preset="small")
    planner = make_player("text", game=game, opponent="builtin", seed=0, manual="civ-guide",
                          corpus=None, model_config=ModelConfig.preset(preset),
                          search_config=SearchConfig(rollouts=6, depth=4, workers=1))
    loaded = []
    real = dispatcher.Dispatcher._compile_for_args

    def spy(self, *args, **kwargs):  # numba's path for a signature it has not loaded yet
        loaded.append(f"{self.py_func.__module__}.{self.py_func.__name__}")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(dispatcher.Dispatcher, "_compile_for_args", spy)
    play(game=game, planner=planner, method="text", opponent="builtin", seed=0, steps=2)
    assert loaded == []
