"""Shared helpers for the benchmarks: model flags, synthetic batches, alternating timing, FLOPs.

The machine these run on is shared, so the timings are noisy: every benchmark alternates its
peers round by round in one process (each round times every peer once, in a rotated order) and
reports the median per peer, so a burst of load hits all peers alike and the ratios hold. Each
timing also records the process's CPU time (all threads), which other processes' load changes
much less than the wall time: a second view of the same ratios.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# torch's OpenMP threads otherwise spin at every barrier while their partner thread waits for
# a core; on this shared 2-core machine that made HF's batch-1 latency 1071 ms instead of 57.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from albert_keras_contracts.record_format import (
    INPUT_IDS,
    INPUT_MASK,
    MASKED_LM_IDS,
    MASKED_LM_POSITIONS,
    MASKED_LM_WEIGHTS,
    SEGMENT_IDS,
    SENTENCE_LABELS,
)


def add_model_arguments(parser: argparse.ArgumentParser, batch_size: int) -> None:
    """Flags for the model config, the batch and the timing protocol (defaults: L6 H256)."""
    model = parser.add_argument_group("model")
    model.add_argument("--vocabulary_size", type=int, default=30000)
    model.add_argument("--num_layers", type=int, default=6)
    model.add_argument("--hidden_dim", type=int, default=256)
    model.add_argument("--num_heads", type=int, default=4)
    model.add_argument("--embedding_dim", type=int, default=128)
    model.add_argument("--intermediate_dim", type=int, default=1024)
    data = parser.add_argument_group("batch")
    data.add_argument("--batch_size", type=int, default=batch_size)
    data.add_argument("--seq_length", type=int, default=128)
    timing = parser.add_argument_group("timing")
    timing.add_argument("--xla", choices=("on", "off"), default="off", help="jit_compile")
    timing.add_argument(
        "--onednn",
        choices=("default", "on", "off"),
        default="default",
        help="TF_ENABLE_ONEDNN_OPTS for TensorFlow (default: TF's choice for this CPU)",
    )
    timing.add_argument("--steps", type=int, default=5, help="steps timed per peer per round")
    timing.add_argument("--rounds", type=int, default=5, help="rounds of alternation")
    timing.add_argument("--warmup", type=int, default=2, help="untimed steps per peer first")
    timing.add_argument("--peers", default="", help="comma-separated subset of peers to run")
    timing.add_argument("--seed", type=int, default=0)


def set_environment(args: argparse.Namespace) -> None:
    """Applies the flags that must be set before TensorFlow is imported."""
    if args.onednn != "default":
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1" if args.onednn == "on" else "0"


def backbone_config(args: argparse.Namespace) -> dict:
    """The constructor arguments shared by our backbone and keras-hub's (ALBERT v2: no dropout)."""
    return {
        "vocabulary_size": args.vocabulary_size,
        "num_layers": args.num_layers,
        "num_heads": args.num_heads,
        "embedding_dim": args.embedding_dim,
        "hidden_dim": args.hidden_dim,
        "intermediate_dim": args.intermediate_dim,
        "dropout": 0.0,
        "max_sequence_length": max(512, args.seq_length),
    }


def hugging_face_config(args: argparse.Namespace, **overrides):
    """`transformers.AlbertConfig` for the same model as `backbone_config` (tanh-GELU as ALBERT's
    `gelu_new`, no dropout); `overrides` are further AlbertConfig fields."""
    from transformers import AlbertConfig

    return AlbertConfig(
        vocab_size=args.vocabulary_size,
        embedding_size=args.embedding_dim,
        hidden_size=args.hidden_dim,
        num_hidden_layers=args.num_layers,
        num_attention_heads=args.num_heads,
        intermediate_size=args.intermediate_dim,
        hidden_act="gelu_new",
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        max_position_embeddings=max(512, args.seq_length),
        **overrides,
    )


def describe(args: argparse.Namespace) -> str:
    # Here, not at the top: importing albert_keras imports TensorFlow, which reads
    # TF_ENABLE_ONEDNN_OPTS once (set_environment must run first).
    import albert_keras
    from albert_keras.training.precision import onednn_enabled

    # Which tree is measured: the script's folder, not the working directory, is on sys.path,
    # so without PYTHONPATH an editable install's tree is imported, whatever the checkout.
    package = os.path.dirname(os.path.dirname(os.path.abspath(albert_keras.__file__)))
    return (
        f"L{args.num_layers} H{args.hidden_dim} A{args.num_heads} E{args.embedding_dim} "
        f"I{args.intermediate_dim} V{args.vocabulary_size}, batch {args.batch_size} x "
        f"{args.seq_length}, xla {args.xla}, oneDNN {'on' if onednn_enabled() else 'off'}, "
        f"albert_keras from {package}"
    )


def wanted(args: argparse.Namespace, name: str) -> bool:
    return not args.peers or name in args.peers.split(",")


def random_batch(
    batch_size: int, seq_length: int, vocabulary_size: int, num_predictions: int, seed: int
) -> dict:
    """A full-length pretraining batch with the TFRecord feature names (NumPy, int32/float32)."""
    rng = np.random.default_rng(seed)
    input_ids = rng.integers(5, vocabulary_size, (batch_size, seq_length), dtype=np.int32)
    # Distinct positions per row, never [CLS] (0) or the final [SEP].
    positions = np.sort(
        np.stack(
            [
                rng.choice(np.arange(1, seq_length - 1), num_predictions, replace=False)
                for _ in range(batch_size)
            ]
        ),
        axis=1,
    ).astype(np.int32)
    segment_ids = np.zeros((batch_size, seq_length), np.int32)
    segment_ids[:, seq_length // 2 :] = 1
    return {
        INPUT_IDS: input_ids,
        INPUT_MASK: np.ones((batch_size, seq_length), np.int32),
        SEGMENT_IDS: segment_ids,
        MASKED_LM_POSITIONS: positions,
        MASKED_LM_IDS: np.take_along_axis(input_ids, positions, axis=1),
        MASKED_LM_WEIGHTS: np.ones((batch_size, num_predictions), np.float32),
        SENTENCE_LABELS: rng.integers(0, 2, (batch_size, 1), dtype=np.int32),
    }


def forward_flops_per_sequence(args: argparse.Namespace, num_predictions: int) -> float:
    """Matmul FLOPs of one forward pass over one sequence (2 per multiply-add).

    Counts the model's useful work: the E->H projection, every layer's QKV, attention scores and
    context, output projection and FFN, the pooler, and the MLM head at the `num_predictions`
    masked positions only (H->E, E->V) plus the 2-way sentence head. Lookups, LayerNorm, softmax
    and activations are left out, as in the usual MFU accounting.
    """
    t, h, e, i, v = (
        args.seq_length,
        args.hidden_dim,
        args.embedding_dim,
        args.intermediate_dim,
        args.vocabulary_size,
    )
    per_layer = t * (2 * h * 3 * h + 2 * h * h + 2 * 2 * h * i) + 2 * 2 * t * t * h
    projection = 0 if e == h else 2 * t * e * h
    heads = 2 * h * h + 2 * h * 2 + num_predictions * (2 * h * e + 2 * e * v)
    return float(args.num_layers * per_layer + projection + heads)


def train_flops_per_sequence(args: argparse.Namespace, num_predictions: int) -> float:
    """A training step costs ~3 forward passes (the backward pass computes two matmuls per one)."""
    return 3.0 * forward_flops_per_sequence(args, num_predictions)


class Timing(NamedTuple):
    """Seconds per step: wall clock, and CPU time of the whole process (all its threads)."""

    wall: float
    cpu: float


Runner = Callable[[int], Timing]


def timed(run_steps: Callable[[int], object]) -> Runner:
    """Wraps `run_steps(n)`, which runs n synchronous steps, as `runner(n) -> Timing` totals."""

    def run(steps: int) -> Timing:
        wall, cpu = time.perf_counter(), time.process_time()
        run_steps(steps)
        return Timing(time.perf_counter() - wall, time.process_time() - cpu)

    return run


def step_runner(step: Callable[[], object]) -> Runner:
    """A runner from a one-step callable that returns only when the step is done."""

    def run_steps(steps: int) -> None:
        for _ in range(steps):
            step()

    return timed(run_steps)


def matmul_runner(m: int, k: int, n: int, seed: int) -> tuple[Runner, float]:
    """A timed fp32 TensorFlow matmul (m x k) @ (k x n); returns (runner, FLOPs per call)."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    a = tf.constant(rng.standard_normal((m, k), dtype=np.float32))
    b = tf.constant(rng.standard_normal((k, n), dtype=np.float32))

    @tf.function
    def repeated(count):
        # A loop inside one graph, so Python dispatch does not count against the rate; the
        # running sum keeps every product alive.
        total = tf.zeros((), tf.float32)
        for _ in tf.range(count):
            total += tf.reduce_sum(tf.matmul(a, b)[:1, :1])
        return total

    repeated(tf.constant(1)).numpy()
    return timed(lambda steps: repeated(tf.constant(steps)).numpy()), 2.0 * m * k * n


def alternate(
    runners: dict[str, Runner],
    rounds: int,
    steps: int,
    warmup: int,
    steps_for: dict[str, int] | None = None,
) -> dict[str, list[Timing]]:
    """Per-round seconds per step of each runner, timed round-robin in a rotated order."""
    steps_for = steps_for or {}
    for run in runners.values():
        if warmup:
            run(warmup)
    per_round = {name: [] for name in runners}
    names = list(runners)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            count = steps_for.get(name, steps)
            total = runners[name](count)
            per_round[name].append(Timing(total.wall / count, total.cpu / count))
        print(
            f"  round {r + 1}/{rounds}: "
            + ", ".join(f"{n} {per_round[n][-1].wall * 1e3:.0f} ms" for n in names),
            flush=True,
        )
    return per_round


def median_timing(times: list[Timing]) -> Timing:
    return Timing(statistics.median(t.wall for t in times), statistics.median(t.cpu for t in times))


def paired_speedup(times: list[Timing], peer_times: list[Timing], field: str) -> float:
    """Median over rounds of (peer's time / this one's time) within each round.

    Paired by round, so load that changes between rounds cancels in each ratio.
    """
    return statistics.median(
        getattr(p, field) / getattr(t, field) for t, p in zip(times, peer_times, strict=True)
    )


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(row[c])) for row in [header] + rows) for c in range(len(header))]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    print(line.format(*header))
    print(line.format(*["-" * w for w in widths]))
    for row in rows:
        print(line.format(*row))


def measure_in_fresh_process(script: str, argv: list[str], measure: str, pythonpath=None) -> dict:
    """Runs `script *argv --measure MEASURE` in a new Python process (nothing traced, compiled
    or cached yet, as a user's first call) and returns its last stdout line, read as JSON.
    `pythonpath` (a source tree) goes first on the child's import path."""
    env = os.environ if pythonpath is None else {**os.environ, "PYTHONPATH": pythonpath}
    child = subprocess.run(
        [sys.executable, script, *argv, "--measure", measure],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(child.stdout.splitlines()[-1])
