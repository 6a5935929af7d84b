"""The GLUE encoder gives the same ids inside tf.data on the JAX backend as on TensorFlow.

On JAX, calling a Keras layer converts its inputs to JAX arrays, which the strings inside a
`tf.data` map cannot become: the encoder must run the preprocessor's own TensorFlow steps.
"""

import json
import os
import subprocess
import sys

import pytest

SCRIPT = """
import json, sys
import tensorflow as tf
from albert_keras.glue.glue_encoder import GlueEncoder

encoder = GlueEncoder(sys.argv[1], 12)
texts_a = tf.constant(["Hello there, my dog", "a film I loved", ""])
texts_b = tf.constant(["is cute", "it dragged on", "x"])
pairs = tf.data.Dataset.from_tensor_slices((texts_a, texts_b)).batch(2).map(encoder)
singles = tf.data.Dataset.from_tensor_slices(texts_a).batch(3).map(encoder)
ids = [b["token_ids"].numpy().tolist() for b in pairs] + [
    b["token_ids"].numpy().tolist() for b in singles
]
print(json.dumps(ids))
"""


def _ids(backend: str, spm_model) -> list:
    env = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(spm_model)],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_ids_in_tf_data_are_the_same_on_jax_and_tensorflow(tiny_spm):
    on_tensorflow = _ids("tensorflow", tiny_spm)
    assert len(on_tensorflow) == 3 and all(row[0] == 2 for batch in on_tensorflow for row in batch)
    assert _ids("jax", tiny_spm) == on_tensorflow
