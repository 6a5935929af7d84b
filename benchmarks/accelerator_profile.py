"""Where an accelerator's pretraining step goes: the GPU kernels of a few profiled steps, summed.

    KERAS_BACKEND=jax python benchmarks/accelerator_profile.py --out /tmp/profile

Builds the step of `accelerator_train_step.py` (its flags: --preset, --batch_size, ...), warms
it up, records `--steps` steps with `jax.profiler` (a Perfetto trace, kept under `--out`) and
prints the device's kernels by total time, grouped into matmuls, attention, and the rest, so
the gap to the peak has a name.
"""

import argparse
import collections
import glob
import gzip
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import accelerator_train_step as bench
from _timing import random_batch


def kernel_times(trace_path: str) -> tuple[dict[str, float], float]:
    """{kernel name: microseconds} over the device's streams, and the device's busy span."""
    with gzip.open(trace_path, "rt") as f:
        events = json.load(f)["traceEvents"]
    device_pids = {
        e["pid"]
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "process_name"
        and "gpu" in str(e.get("args", {}).get("name", "")).lower()
    }
    totals: dict[str, float] = collections.Counter()
    first, last = float("inf"), 0.0
    for e in events:
        if e.get("ph") == "X" and e.get("pid") in device_pids:
            totals[e["name"]] += e.get("dur", 0.0)
            first, last = min(first, e["ts"]), max(last, e["ts"] + e.get("dur", 0.0))
    if not totals:
        names = sorted(
            str(e.get("args", {}).get("name"))
            for e in events
            if e.get("ph") == "M" and e.get("name") == "process_name"
        )
        print(f"no device kernels in {trace_path}; its processes: {names}")
    return totals, max(last - first, 0.0)


def family(name: str) -> str:
    lowered = name.lower()
    if any(k in lowered for k in ("fmha", "flash", "cudnn", "attention", "sdpa")):
        return "attention (cuDNN)"
    if any(k in lowered for k in ("gemm", "cutlass", "nvjet", "sm90_xmma", "matmul", "dot")):
        return "matmul"
    if "loop_" in lowered or "fusion" in lowered or "input_" in lowered:
        return "XLA fusion (elementwise, reductions, softmax)"
    return "other"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp/albert_profile")
    parser.add_argument("--steps", type=int, default=5, help="profiled steps")
    parser.add_argument("--top", type=int, default=25)
    args, step_flags = parser.parse_known_args(argv)
    import jax

    # The model, batch and precision flags are accelerator_train_step.py's, defaults included;
    # bfloat16 unless given (its `auto` reads TensorFlow, which a JAX machine may lack).
    step_args = bench.parse_args(["--mixed_precision", "mixed_bfloat16", *step_flags])
    batch = random_batch(
        step_args.batch_size,
        step_args.seq_length,
        step_args.vocabulary_size,
        step_args.num_predictions,
        step_args.seed,
    )
    run = bench.build_step(step_args, batch, step_args.mixed_precision, flash=True)
    run(2)
    jax.profiler.start_trace(args.out, create_perfetto_trace=True)
    run(args.steps)
    jax.profiler.stop_trace()
    path = max(glob.glob(f"{args.out}/**/*.trace.json.gz", recursive=True), key=os.path.getmtime)
    totals, span = kernel_times(path)
    busy = sum(totals.values())
    if not busy:
        return 1
    by_family = collections.Counter()
    for name, us in totals.items():
        by_family[family(name)] += us
    print(
        f"trace {path}: device busy {busy / 1e3 / args.steps:.1f} ms/step of a "
        f"{span / 1e3 / args.steps:.1f} ms/step span"
    )
    for name, us in by_family.most_common():
        print(f"  {us / busy:6.1%}  {us / 1e3 / args.steps:7.2f} ms/step  {name}")
    for name, us in totals.most_common(args.top):
        print(f"  {us / busy:6.1%}  {us / 1e3 / args.steps:7.2f} ms/step  {name[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
