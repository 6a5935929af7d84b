"""The models on the JAX backend, in a subprocess (the backend is fixed at import)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from model_inputs import make_backbone_inputs, make_pretraining_batch

import albert_keras as ak

JAX_SCRIPT = """
import json, sys
import keras, numpy as np
import albert_keras as ak
assert keras.backend.backend() == "jax"
folder = sys.argv[1]
inputs = dict(np.load(f"{folder}/inputs.npz"))
backbone = keras.saving.load_model(f"{folder}/backbone.keras")
np.save(f"{folder}/jax_output.npy", np.asarray(backbone(inputs)["sequence_output"]))
rows = backbone.outputs_at(inputs, np.load(f"{folder}/positions.npy"))["sequence_output"]
np.save(f"{folder}/jax_rows.npy", np.asarray(rows))
batch = dict(np.load(f"{folder}/batch.npz"))
pretrainer = ak.AlbertPretrainer(backbone)
pretrainer.compile(optimizer=keras.optimizers.Adam(1e-2))
history = pretrainer.fit(batch, epochs=8, batch_size=4, verbose=0).history
print(json.dumps(history))
"""


# make test-all only: a JAX interpreter's start-up and XLA:CPU compiles, ~30 s on 2 cores
@pytest.mark.slow
def test_backbone_outputs_and_pretrainer_fit_on_jax(tmp_path, tiny_config):
    backbone = ak.AlbertBackbone(**tiny_config, num_groups=2)
    backbone.save(tmp_path / "backbone.keras")
    inputs = make_backbone_inputs()
    np.savez(tmp_path / "inputs.npz", **inputs)
    positions = np.array([[3, 1], [0, 5], [2, 2], [1, 0]], "int32")
    np.save(tmp_path / "positions.npy", positions)
    np.savez(tmp_path / "batch.npz", **make_pretraining_batch())
    result = subprocess.run(
        [sys.executable, "-c", JAX_SCRIPT, str(tmp_path)],
        env={**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # The .keras file is backend-neutral: JAX computes what TensorFlow computed.
    sequence_output = np.asarray(backbone(inputs)["sequence_output"])
    np.testing.assert_allclose(np.load(tmp_path / "jax_output.npy"), sequence_output, atol=1e-5)
    # The sparse last layer (dot_product_attention with fewer queries than keys) on JAX too.
    np.testing.assert_allclose(
        np.load(tmp_path / "jax_rows.npy"),
        np.take_along_axis(sequence_output, positions[..., None], axis=1),
        atol=1e-5,
    )
    history = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(history) == {
        "loss",
        "mlm_loss",
        "mlm_accuracy",
        "sentence_loss",
        "sentence_accuracy",
    }
    assert history["loss"][-1] < 0.85 * history["loss"][0]
    # The reported total is the sum of the parts (one batch per epoch).
    np.testing.assert_allclose(
        np.add(history["mlm_loss"], history["sentence_loss"]), history["loss"], rtol=1e-4
    )
