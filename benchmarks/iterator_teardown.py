"""How long dropping a tf.data iterator takes, with tf.data's autotuning on and off.

    .venv/bin/python benchmarks/iterator_teardown.py [--seconds 60]

One pipeline (a parallel map and a prefetch, both `tf.data.AUTOTUNE`, as our readers build
them), read by iterator after iterator: each reads for a random 0.05-1.5 s, then is dropped
(`del`), and the drop is timed. With autotuning on, the drop waits for the autotuning model
thread's current sleep (its interval doubles from 10 ms up to a minute, so a longer-lived
iterator can wait longer); with `albert_keras_contracts.autotune_off` there is no such thread.
The two settings alternate, iterator by iterator, for `--seconds` each.
"""

import argparse
import os
import random
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="reading time per setting")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import tensorflow as tf

    from albert_keras_contracts.autotune_off import autotune_off

    pipeline = (
        tf.data.Dataset.range(2**40)
        .map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)
        .batch(4)
        .prefetch(tf.data.AUTOTUNE)
    )
    settings = {
        "autotuning on (tf.data's default)": pipeline,
        "albert_keras_contracts.autotune_off": autotune_off(pipeline),
    }
    drops = {name: [] for name in settings}
    read = dict.fromkeys(settings, 0.0)
    rng = random.Random(args.seed)
    while min(read.values()) < args.seconds:
        for name, dataset in settings.items():
            iterator, lifetime = iter(dataset), rng.uniform(0.05, 1.5)
            start = time.perf_counter()
            while time.perf_counter() - start < lifetime:
                next(iterator)
            read[name] += time.perf_counter() - start
            start = time.perf_counter()
            del iterator
            drops[name].append(time.perf_counter() - start)
    print(f"tensorflow {tf.__version__}; iterators read for 0.05-1.5 s each, then dropped")
    print("| setting | iterators | drop: median ms | max ms | waited > 50 ms |")
    print("|---|---|---|---|---|")
    for name, times in drops.items():
        slow = sum(t > 0.05 for t in times)
        print(
            f"| {name} | {len(times)} | {statistics.median(times) * 1e3:.1f} | "
            f"{max(times) * 1e3:.0f} | {slow} ({slow / len(times):.0%}) |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
