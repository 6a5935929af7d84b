"""Pretraining step on an accelerator (JAX backend): tokens/s and MFU, flash attention on / off.

    KERAS_BACKEND=jax python benchmarks/accelerator_train_step.py            # albert_base, 32 x 512
    python benchmarks/accelerator_train_step.py --preset albert_large --batch_size 16
    python benchmarks/accelerator_train_step.py --tiny                       # a CPU smoke run

Builds `AlbertPretrainer` (MLM + SOP) on the JAX backend in the policy `--mixed_precision auto`
picks for the device (bfloat16 on TPUs and GPUs of compute capability >= 8.0), compiles the
train step with XLA (as JAX always does), and times `train_on_batch` on a synthetic full-length
batch. Two variants alternate round by round: attention through `keras.ops.dot_product_attention`
with Keras's flash attention enabled (cuDNN's fused kernel on NVIDIA GPUs, Pallas / splash on
TPUs, where the shapes and dtype allow it) and with it disabled. Prints per variant the step
time, tokens/s, the model's TFLOP/s and MFU: achieved FLOP/s over the device's peak dense
bfloat16 (or float32) FLOP/s from the table below, as the PaLM paper defines MFU (model FLOPs
only: no recomputation, 3x forward matmuls per training step).

The model's own fast paths are TensorFlow's; on JAX every layer runs its `keras.ops` reference
(XLA fuses it), so this measures the portable code.
"""

import argparse
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

from _timing import (
    alternate,
    median_timing,
    paired_speedup,
    print_table,
    random_batch,
    step_runner,
    timed,
    train_flops_per_sequence,
)

# Peak dense FLOP/s per device (bfloat16 / float32 on tensor cores or MXUs; vendor data sheets,
# SXM / largest variant; no sparsity). Matched by substring of JAX's `device_kind`, in order.
PEAK_FLOPS = (
    ("H200", {"bfloat16": 989e12, "float32": 67e12}),
    ("H100", {"bfloat16": 989e12, "float32": 67e12}),
    ("A100", {"bfloat16": 312e12, "float32": 19.5e12}),
    ("L4", {"bfloat16": 121e12, "float32": 30e12}),
    ("A10", {"bfloat16": 125e12, "float32": 31e12}),
    ("V100", {"float16": 125e12, "float32": 15.7e12}),
    ("T4", {"float16": 65e12, "float32": 8.1e12}),
    ("TPU v6", {"bfloat16": 918e12}),
    ("TPU v5p", {"bfloat16": 459e12}),
    ("TPU v5", {"bfloat16": 197e12}),  # v5e / v5 lite
    ("TPU v4", {"bfloat16": 275e12}),
    ("TPU v3", {"bfloat16": 123e12}),
    ("TPU v2", {"bfloat16": 45e12}),
)


def peak_flops(device_kind: str, policy: str) -> float | None:
    """The device's peak FLOP/s for `policy`'s compute dtype, None when unknown (CPUs)."""
    dtype = {"mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}.get(policy, "float32")
    for name, peaks in PEAK_FLOPS:
        if name.lower() in device_kind.lower():
            return peaks.get(dtype)
    return None


def build_step(args, batch, policy: str, flash: bool):
    """A runner of training steps with flash attention `flash` when it traces.

    `--loop fit` (the default) times `fit` over the batch repeated in memory, one call per
    round, as a user trains; `--loop train_on_batch` one call and one device sync per step,
    which adds the host's dispatch to every step.
    """
    import keras
    import numpy as np

    import albert_keras as ak

    keras.utils.set_random_seed(args.seed)
    config = dict(ak.AlbertBackbone.presets[args.preset])
    config.update(model_config(args))
    pretrainer = ak.AlbertPretrainer(
        ak.AlbertBackbone(**config, dtype=policy), sentence_objective="sop"
    )
    pretrainer.compile(optimizer=ak.optimizers.Lamb(learning_rate=1e-4))

    def switch():
        # The switch is read when `dot_product_attention` is traced: the first call traces.
        if flash:
            keras.config.enable_flash_attention()
        else:
            keras.config.disable_flash_attention()

    if args.loop == "train_on_batch":

        def step():
            switch()
            pretrainer.train_on_batch(batch)  # returns NumPy logs: waits for the device

        return step_runner(step)
    repeats = max(args.steps, args.warmup)
    data = {name: np.concatenate([value] * repeats) for name, value in batch.items()}

    def run_steps(steps: int) -> None:
        switch()
        pretrainer.fit(data, batch_size=args.batch_size, steps_per_epoch=steps, verbose=0)

    return timed(run_steps)


def model_config(args) -> dict:
    """The backbone arguments the flags override (the rest is the preset's)."""
    names = ("num_layers", "hidden_dim", "num_heads", "intermediate_dim", "embedding_dim")
    config = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    config["vocabulary_size"] = args.vocabulary_size
    config["max_sequence_length"] = max(args.seq_length, 512)
    config["dropout"] = 0.0
    return config


def parse_args(argv=None) -> argparse.Namespace:
    """The benchmark's flags (also read by accelerator_profile.py)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="albert_base", help="an AlbertBackbone preset")
    for name in ("num_layers", "hidden_dim", "num_heads", "intermediate_dim", "embedding_dim"):
        parser.add_argument(f"--{name}", type=int, default=None, help="default: the preset's")
    parser.add_argument("--vocabulary_size", type=int, default=30000)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--seq_length", type=int, default=512)
    parser.add_argument("--num_predictions", type=int, default=20, help="masked positions")
    parser.add_argument("--mixed_precision", default="auto", help="auto, float32, mixed_...")
    parser.add_argument("--steps", type=int, default=30, help="steps per variant per round")
    parser.add_argument(
        "--loop",
        choices=("fit", "train_on_batch"),
        default="fit",
        help="fit: one fit call per round, as a user trains; train_on_batch: a call per step",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps (compile) first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--flash",
        default="on,off",
        help="the variants to time, comma-separated: on, off or both (one alone when the other"
        " does not compile on a device)",
    )
    parser.add_argument(
        "--tiny", action="store_true", help="L2 H64 4 heads, batch 4 x 64: a smoke run for CPUs"
    )
    args = parser.parse_args(argv)
    if args.tiny:
        args.num_layers, args.hidden_dim, args.num_heads = 2, 64, 4
        args.intermediate_dim, args.embedding_dim = 128, 32
        args.batch_size, args.seq_length, args.steps, args.rounds = 4, 64, 3, 2
    variants = [v.strip() for v in args.flash.split(",") if v.strip()]
    if not variants or set(variants) - {"on", "off"}:
        parser.error(f"--flash {args.flash!r}: expected on, off or on,off")
    args.flash = variants
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    import jax
    import keras

    import albert_keras as ak

    if keras.backend.backend() != "jax":
        sys.exit(f"KERAS_BACKEND={keras.backend.backend()}: this benchmark is for jax")
    if args.mixed_precision == "auto":
        # `auto` is the training runtime's choice, which imports TensorFlow (the record
        # readers); a machine with JAX alone names the policy instead.
        from albert_keras.training.precision import choose_precision

        policy, why = choose_precision(args.mixed_precision, None)
    else:
        policy, why = args.mixed_precision, "as given"
    device = jax.devices()[0]
    config = {**ak.AlbertBackbone.presets[args.preset], **model_config(args)}
    flop_args = argparse.Namespace(
        seq_length=args.seq_length,
        hidden_dim=config["hidden_dim"],
        embedding_dim=config["embedding_dim"],
        intermediate_dim=config["intermediate_dim"],
        vocabulary_size=config["vocabulary_size"],
        num_layers=config["num_layers"],
    )
    step_flops = args.batch_size * train_flops_per_sequence(flop_args, args.num_predictions)
    batch = random_batch(
        args.batch_size, args.seq_length, args.vocabulary_size, args.num_predictions, args.seed
    )
    runners = {
        f"flash attention {v}": build_step(args, batch, policy, flash=v == "on") for v in args.flash
    }
    print(
        f"{args.preset} L{config['num_layers']} H{config['hidden_dim']} "
        f"A{config['num_heads']} E{config['embedding_dim']} I{config['intermediate_dim']} "
        f"V{args.vocabulary_size}, batch {args.batch_size} x {args.seq_length}, "
        f"{args.num_predictions} masked positions, {args.loop}; "
        f"{len(jax.devices())} x {device.device_kind} "
        f"({device.platform}); {policy} ({why}); jax {jax.__version__}, keras {keras.__version__}"
    )
    per_round = alternate(runners, args.rounds, args.steps, args.warmup)
    peak = peak_flops(device.device_kind, policy)
    tokens = args.batch_size * args.seq_length
    rows = []
    for name, times in per_round.items():
        seconds = median_timing(times).wall
        rate = step_flops / seconds
        other = next((n for n in per_round if n != name), name)
        rows.append(
            [
                name,
                f"{seconds * 1e3:.1f}",
                f"{tokens / seconds:,.0f}",
                f"{rate / 1e12:.2f}",
                f"{rate / peak:.1%}" if peak else "- (peak unknown)",
                f"{paired_speedup(times, per_round[other], 'wall'):.2f}",
            ]
        )
    print_table(["variant", "ms/step", "tokens/s", "TFLOP/s", "MFU", "x the other"], rows)
    print(
        f"model FLOPs per step: {step_flops / 1e12:.3f} T (3x forward matmuls, MLM at the masked"
        f" positions); peak used for MFU: {peak / 1e12 if peak else 0:.0f} TFLOP/s"
        f" ({device.device_kind}, {policy})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
