"""Where ours' pretraining step goes: the forward pass, the gradients, the optimizer, Keras' call.

    .venv/bin/python benchmarks/step_parts.py [--rounds 8] [--precision mixed_bfloat16,float32]

At `time_to_accuracy.py`'s shapes (L4 H128 A2 E128 I512, V 8,000 random ids, batch 32 x 64,
LAMB at its best rate there; `gather_rows.py`'s model), four nested parts of one step, each one
`tf.function` (or Keras' own call) over the same 20 batches, in rounds of alternating order:

- `forward`: the pretrainer's outputs (`training=True`);
- `forward + loss + gradients`: `compute_loss` and the gradients of every trainable variable;
- `train_step`: Keras' `Model.train_step` (+ clipping, the LAMB update and the metrics);
- `train_on_batch`: the user-facing call (+ NumPy in and out, Keras' per-call work).

The difference between two lines is what the later part adds; medians over the rounds.
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def parts_of(model, batches: list) -> dict:
    """Each part's name -> a call running it over `batches[5:]` (NumPy out, so it waits)."""
    import keras
    import numpy as np
    import tensorflow as tf

    tensors = [{k: tf.constant(v) for k, v in b.items()} for b in batches[5:]]

    def gradients(data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        with tf.GradientTape() as tape:
            y_pred = model(x, training=True)
            loss = model.compute_loss(x, y, y_pred, sample_weight, training=True)
        return tape.gradient(loss, model.trainable_variables)

    traced = {
        "forward": tf.function(lambda data: model(data, training=True)),
        "forward + loss + gradients": tf.function(gradients),
        "train_step": tf.function(model.train_step),
    }
    parts = {
        name: (lambda f=f: [tf.nest.map_structure(np.asarray, f(t)) for t in tensors])
        for name, f in traced.items()
    }
    parts["train_on_batch"] = lambda: [model.train_on_batch(b) for b in batches[5:]]
    return parts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--precision", default="mixed_bfloat16,float32")
    args = parser.parse_args(argv)
    import keras
    import numpy as np
    from _timing import random_batch
    from gather_rows import VOCABULARY_SIZE, pretrainer

    keras.config.set_dtype_policy("float32")
    batches = [random_batch(32, 64, VOCABULARY_SIZE, 10, seed) for seed in range(25)]
    steps = len(batches) - 5
    for policy in args.precision.split(","):
        parts = parts_of(pretrainer(policy, batches), batches)
        for part in parts.values():
            part()  # traces
        times = {name: [] for name in parts}
        for round_index in range(args.rounds):
            order = list(parts) if round_index % 2 == 0 else list(parts)[::-1]
            for name in order:
                start = time.perf_counter()
                parts[name]()
                times[name].append((time.perf_counter() - start) / steps * 1e3)
        print(f"{policy}, ms per step (median of {args.rounds} rounds of {steps} steps):")
        for name, values in times.items():
            print(f"  {name:28s} {np.median(values):6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
