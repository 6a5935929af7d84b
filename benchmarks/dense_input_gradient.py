"""A Dense layer's input gradient on TensorFlow: `upstream @ kernel^T` two ways, per shape.

    .venv/bin/python benchmarks/dense_input_gradient.py [--rounds 7]

For each Dense of the default model (L6 H256 E128 I1024, 16 x 128 tokens, and the sparse last
layer's 336 rows), times the product TensorFlow's automatic gradient computes (`tf.matmul(
upstream, kernel, transpose_b=True)`) against the product with a transposed copy of the kernel
made by a small XLA function (`fast_paths.widening_matmul`'s way; a plain `tf.transpose` is
folded back into `transpose_b` by Grappler), the copy's time included, in float32 and bfloat16.
Each is the best of `--rounds` runs of 20 calls in one `tf.function`; the two alternate. The
layers take the copy where it wins by a margin on a whole step: the FFN's H -> I in float32.
"""

import argparse
import time

import _timing  # noqa: F401 - quiet TF logs
import numpy as np
import tensorflow as tf


def timed_ms(function, calls: int = 20) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - started) / calls * 1e3


def alternately(products: list, rounds: int) -> list[float]:
    """Best milliseconds of each product, their timings alternating round by round."""
    # Each returns a corner of its product: enough to keep it, not a copy of it.
    functions = [tf.function(lambda p=p: tf.reduce_sum(p()[:1, :1])) for p in products]
    for function in functions:
        function()
    best = [float("inf")] * len(functions)
    for _ in range(rounds):
        best = [min(b, timed_ms(f)) for b, f in zip(best, functions)]
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    transpose = tf.function(lambda kernel: tf.transpose(kernel), jit_compile=True)
    rng = np.random.default_rng(0)
    shapes = [  # (rows, fan_in, fan_out, the Dense)
        (2048, 128, 256, "embedding projection E -> H"),
        (2048, 256, 768, "attention qkv H -> 3H"),
        (2048, 256, 256, "attention output H -> H"),
        (2048, 256, 1024, "FFN H -> I"),
        (2048, 1024, 256, "FFN I -> H"),
        (336, 256, 1024, "FFN H -> I, sparse last layer"),
    ]
    print(f"{'Dense':32}{'dtype':>10}{'transpose_b ms':>16}{'copy ms':>9}{'speed-up':>10}")
    for dtype in ("float32", "bfloat16"):
        for rows, fan_in, fan_out, name in shapes:
            upstream = tf.cast(rng.standard_normal((rows, fan_out), np.float32), dtype)
            kernel = tf.Variable(tf.cast(rng.standard_normal((fan_in, fan_out), np.float32), dtype))
            folded, copied = alternately(
                [
                    lambda u=upstream, k=kernel: tf.matmul(u, k, transpose_b=True),
                    lambda u=upstream, k=kernel: tf.matmul(u, transpose(k)),
                ],
                args.rounds,
            )
            print(f"{name:32}{dtype:>10}{folded:16.3f}{copied:9.3f}{folded / copied:9.2f}x")


if __name__ == "__main__":
    main()
