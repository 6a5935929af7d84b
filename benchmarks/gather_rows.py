"""`gather_rows` against `ops.take_along_axis`: the op alone, then whole pretraining steps.

    .venv/bin/python benchmarks/gather_rows.py [--rounds 20] [--precision mixed_bfloat16]

The op: forward plus backward of gathering 11 rows of each of 32 sequences of 64 x 128 (the
sparse last layer's [CLS] and 10 masked positions at `time_to_accuracy.py`'s shapes), one
`tf.function` each, medians of 200 calls. Whole steps: two `AlbertPretrainer`s of the race's
shape (L4 H128 A2 E128 I512, V 8,000 random ids, batch 32 x 64, LAMB), one traced with the
sparse last layer gathering by `take_along_axis` (the module's `gather_rows` name pointed at it
while it traces), one with `gather_rows`; `--rounds` rounds of 20 `train_on_batch` steps each,
the order alternating, and the paired ratio of each round. Both models must end with the same
weights: the two gathers are the same function.
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
VOCABULARY_SIZE = 8000  # the books' vocabulary in the race


def take_along_axis_rows(sequence, positions):
    from keras import ops

    return ops.take_along_axis(sequence, ops.expand_dims(positions, -1), axis=1)


def op_milliseconds(gather, calls=200) -> float:
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    sequence = tf.constant(rng.normal(size=(32, 64, 128)), tf.float32)
    positions = tf.constant(rng.integers(0, 64, size=(32, 11)), tf.int32)
    upstream = tf.constant(rng.normal(size=(32, 11, 128)), tf.float32)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            rows = gather(x, positions)
        return tf.convert_to_tensor(tape.gradient(rows, x, output_gradients=upstream))

    step(sequence)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        step(sequence).numpy()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def pretrainer(policy: str, batches: list):
    """An `AlbertPretrainer` of the race's shape (`time_to_accuracy.py`'s defaults) with LAMB at
    its best rate there, traced on the first batches."""
    import keras
    from _time_to_accuracy_peers import backbone_config
    from time_to_accuracy import parse_arguments

    from albert_keras.models import AlbertBackbone, AlbertPretrainer
    from albert_keras.optimizers import Lamb, WarmupLinearDecay
    from albert_keras.training.precision import loss_scaled

    keras.utils.set_random_seed(0)
    config = backbone_config(parse_arguments([]), VOCABULARY_SIZE)
    model = AlbertPretrainer(AlbertBackbone(**config, dtype=policy), "sop")
    schedule = WarmupLinearDecay(1e-2, 100, 4000)
    model.compile(optimizer=loss_scaled(Lamb(learning_rate=schedule), policy), jit_compile=False)
    for batch in batches[:5]:
        model.train_on_batch(batch)  # traces here
    return model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=20, help="steps per round")
    parser.add_argument("--precision", default="mixed_bfloat16,float32")
    args = parser.parse_args(argv)
    import keras
    import numpy as np
    from _timing import random_batch

    import albert_keras.layers.self_attention_block as block
    from albert_keras.layers.gather_rows import gather_rows

    keras.config.set_dtype_policy("float32")
    old, new = op_milliseconds(take_along_axis_rows), op_milliseconds(gather_rows)
    print(f"the op, forward + backward: take_along_axis {old:.2f} ms, gather_rows {new:.2f} ms")
    batches = [random_batch(32, 64, VOCABULARY_SIZE, 10, seed) for seed in range(5 + args.steps)]
    for policy in args.precision.split(","):
        models = {}
        for name, gather in (
            ("take_along_axis", take_along_axis_rows),
            ("gather_rows", gather_rows),
        ):
            block.gather_rows = gather  # seen while the model traces, in its first steps
            try:
                models[name] = pretrainer(policy, batches)
            finally:
                block.gather_rows = gather_rows
        times = {name: [] for name in models}
        for round_index in range(args.rounds):
            order = list(models) if round_index % 2 == 0 else list(models)[::-1]
            for name in order:
                start = time.perf_counter()
                for batch in batches[5:]:
                    models[name].train_on_batch(batch)
                times[name].append((time.perf_counter() - start) / args.steps)
        weights = [m.get_weights() for m in models.values()]
        difference = max(float(np.abs(a - b).max()) for a, b in zip(*weights))
        old, new = (np.array(times[n]) for n in models)
        ratio = old / new
        print(
            f"{policy}: ms/step take_along_axis {np.median(old) * 1e3:.1f}, gather_rows "
            f"{np.median(new) * 1e3:.1f}; paired ratio {np.median(ratio):.3f} (quartiles "
            f"{np.percentile(ratio, 25):.3f}-{np.percentile(ratio, 75):.3f}, {args.rounds} "
            f"rounds); largest weight difference {difference:.1e}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
