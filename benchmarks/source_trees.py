"""Our pretraining step from two source trees, before vs after a change, in one run.

    git worktree add /tmp/before <commit>            # the tree before the change
    .venv/bin/python benchmarks/source_trees.py --trees before=/tmp/before,after=.

Each tree gets a worker process that imports `albert_keras` from that tree (its folder first on
`PYTHONPATH`), builds the same `AlbertPretrainer` (the model flags of `train_step.py`, default
L6 H256 E128 I1024, 16 x 128) in `--policy` (default float32, the only policy every tree has),
compiles it with `train_step.py`'s AdamW and warms it up. The workers stay alive and take turns,
round by round in a rotated order, so the machine's load changes cancel in the paired per-round
ratios. Only the model code comes from the trees; the batch and the timing are this file's.
"""

import argparse
import json
import os
import subprocess
import sys

from _timing import (
    Timing,
    add_model_arguments,
    backbone_config,
    median_timing,
    paired_speedup,
    print_table,
    random_batch,
    set_environment,
    step_runner,
)


def worker(args) -> None:
    """Builds the model from the `albert_keras` on `sys.path`, then times `steps` steps for each
    number read from stdin, answering one JSON `Timing` line each."""
    import keras
    import tensorflow as tf
    from train_step import keras_optimizer

    import albert_keras as ak

    keras.utils.set_random_seed(args.seed)
    backbone = ak.AlbertBackbone(**backbone_config(args), dtype=args.policy)
    pretrainer = ak.AlbertPretrainer(backbone, sentence_objective="sop")
    pretrainer.compile(optimizer=keras_optimizer(), jit_compile=args.xla == "on")
    batch = random_batch(args.batch_size, args.seq_length, args.vocabulary_size, 20, args.seed)
    x = {key: tf.constant(value) for key, value in batch.items()}
    run = step_runner(lambda: pretrainer.train_on_batch(x))
    run(args.warmup)
    print(json.dumps({"ready": os.path.dirname(ak.__file__)}), flush=True)
    for line in sys.stdin:
        steps = int(line)
        timing = run(steps)
        print(json.dumps({"wall": timing.wall / steps, "cpu": timing.cpu / steps}), flush=True)


def start_worker(tree: str, argv: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    command = [sys.executable, os.path.abspath(__file__), "--worker", *argv]
    return subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )


def answer(process: subprocess.Popen, name: str) -> dict:
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"{name}: the worker stopped (exit {process.wait()})")
    return json.loads(line)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser, batch_size=16)
    parser.add_argument("--trees", required=True, help="NAME=DIR,NAME=DIR (the first is the base)")
    parser.add_argument("--policy", default="float32", help="the backbone's dtype policy")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    set_environment(args)
    if args.worker:
        worker(args)
        return 0
    trees = dict(item.split("=", 1) for item in args.trees.split(",") if item)
    for name, tree in trees.items():
        if not os.path.isfile(os.path.join(tree, "albert_keras", "__init__.py")):
            parser.error(f"--trees {name}={tree}: no albert_keras package in that folder")
    workers = {name: start_worker(tree, argv) for name, tree in trees.items()}
    for name, process in workers.items():
        print(f"{name}: albert_keras from {answer(process, name)['ready']}", flush=True)
    names = list(workers)
    per_round = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            workers[name].stdin.write(f"{args.steps}\n")
            workers[name].stdin.flush()
            result = answer(workers[name], name)
            per_round[name].append(Timing(result["wall"], result["cpu"]))
        print(
            f"  round {r + 1}/{args.rounds}: "
            + ", ".join(f"{n} {per_round[n][-1].wall * 1e3:.0f} ms" for n in names),
            flush=True,
        )
    for process in workers.values():
        process.stdin.close()
        process.wait()
    base = names[0]
    rows = []
    for name in names:
        median = median_timing(per_round[name])
        rows.append(
            [
                name,
                f"{median.wall * 1e3:.1f}",
                f"{median.cpu * 1e3:.1f}",
                f"{paired_speedup(per_round[name], per_round[base], 'wall'):.3f}",
                f"{paired_speedup(per_round[name], per_round[base], 'cpu'):.3f}",
            ]
        )
    print(f"\npretraining step, {args.policy}, batch {args.batch_size} x {args.seq_length}")
    print_table(["tree", "ms/step", "CPU ms/step", f"x {base} (clock)", f"x {base} (CPU)"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
