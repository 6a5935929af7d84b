"""`import albert_keras` is the model library only, and `.keras` files load after it alone."""

import os
import subprocess
import sys

import keras
import pytest

import albert_keras as ak
from albert_keras.optimizers import Lamb, WarmupLinearDecay

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(code):
    env = {**os.environ, "PYTHONPATH": REPO_ROOT}
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_albert_keras_loads_the_model_library_only():
    out = run_python(
        "import sys, albert_keras\n"
        "names = sorted({m.split('.')[1] for m in sys.modules\n"
        "                if m.startswith('albert_keras.') and m.count('.') >= 1})\n"
        "print(names, 'pipelines' in sys.modules)"
    )
    # The model library, its version and `from_preset`'s registry (presets load on first use).
    assert out.strip() == "['layers', 'models', 'optimizers', 'preset_registry', 'version'] False"


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_jobs_load_on_first_use_and_the_shims_are_gone():
    out = run_python(
        "import importlib.util, albert_keras as ak\n"
        "from albert_keras.optimizers.lamb import Lamb\n"
        "print(ak.optimizers.Lamb is Lamb, [name for name in ('Lamb', 'AdamWeightDecay',\n"
        "      'WarmupLinearDecay') if hasattr(ak.training, name)])\n"
        "for name in ('cli', 'training.lamb', 'training.adam_weight_decay',\n"
        "             'training.warmup_linear_decay'):\n"
        "    print(importlib.util.find_spec(f'albert_keras.{name}'))"
    )
    # The optimizers live in `albert_keras.optimizers` only: `training` re-exports none of them.
    assert out.split() == ["True", "[]", "None", "None", "None", "None"]


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_a_saved_pretrainer_loads_after_import_albert_keras_alone(tmp_path, tiny_config):
    pretrainer = ak.AlbertPretrainer(ak.AlbertBackbone(**tiny_config))
    pretrainer.compile(optimizer=Lamb(WarmupLinearDecay(1e-3, 2, 10)))
    pretrainer.optimizer.build(pretrainer.trainable_variables)
    path = tmp_path / "pretrainer.keras"
    pretrainer.save(path)
    out = run_python(
        "import keras, albert_keras\n"
        f"model = keras.saving.load_model({str(path)!r})\n"
        "print(type(model).__name__, type(model.optimizer).__name__,\n"
        "      model.optimizer.get_config()['learning_rate']['class_name'])"
    )
    assert out.strip().splitlines()[-1] == "AlbertPretrainer Lamb WarmupLinearDecay"
    assert keras.saving.get_registered_name(Lamb) == "albert_keras>Lamb"
