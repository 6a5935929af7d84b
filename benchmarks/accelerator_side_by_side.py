"""ALBERT pretraining steps on one accelerator, side by side: ours, keras-hub and Hugging Face.

    python benchmarks/accelerator_side_by_side.py                 # base and large, 32 x 512, bf16
    python benchmarks/accelerator_side_by_side.py --presets albert_base --batch_size 64
    python benchmarks/accelerator_side_by_side.py --tiny          # a CPU smoke run (CI)

One table per preset, one row per peer: ms per step, tokens/s, model TFLOP/s and MFU (the model's
FLOPs per step over the device's peak dense bfloat16 FLOP/s, as the PaLM paper defines it; the
same FLOP count for every peer: MLM at the masked positions, SOP, 3x the forward matmuls), and
each peer's speed over the fastest other peer. The peers, each in bfloat16 as its own docs
recommend on the device:

- **ours (JAX)**: `AlbertPretrainer` (MLM + SOP) under Keras' `mixed_bfloat16` on the JAX
  backend, `fit` over the batch (XLA-compiled, as JAX always is);
- **ours (TensorFlow)**: the same model on the TensorFlow backend with `jit_compile=True`,
  where the device has TensorFlow;
- **keras-hub (JAX)**: `keras_hub.models.AlbertMaskedLM` (MLM only: it has no sentence head)
  under `mixed_bfloat16`, `fit` on the same batch;
- **Hugging Face (PyTorch)**: `AlbertForPreTraining` with `attn_implementation="sdpa"`, under
  `torch.autocast(bfloat16)`, compiled with `torch.compile`, fused AdamW.

Every peer gets the same synthetic full-length batch and AdamW (1e-4, weight decay 0.01). Each
peer runs in its own process (a Keras backend is chosen per process), one after another on the
otherwise idle device: `--rounds` timed rounds of `--steps` steps after `--warmup` untimed ones
(compilation), the median round reported. A peer whose stack the device lacks is named with the
reason (e.g. no PyTorch in the image) instead of a row. The prepared single device call is
`bash benchmarks/device_side_by_side.sh` (under 8 minutes on an H100 / H200).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _timing import random_batch, train_flops_per_sequence
from accelerator_train_step import PEAK_FLOPS

from albert_keras_contracts.catalogue import ARCHITECTURE_PRESETS
from albert_keras_contracts.record_format import (  # the records' names, spelled once
    INPUT_IDS,
    INPUT_MASK,
    MASKED_LM_IDS,
    MASKED_LM_POSITIONS,
    MASKED_LM_WEIGHTS,
    SEGMENT_IDS,
    SENTENCE_LABELS,
)

LEARNING_RATE, WEIGHT_DECAY = 1e-4, 0.01
SIZE_KEYS = ("num_layers", "hidden_dim", "num_heads", "intermediate_dim")
PEERS = ("ours-jax", "ours-tensorflow", "keras-hub-jax", "hugging-face-torch")
BACKENDS = {"ours-jax": "jax", "ours-tensorflow": "tensorflow", "keras-hub-jax": "jax"}
# The ALBERT presets (the paper's Table 1), from the catalogue (pure Python: a device without
# our package's dependencies reads it with the checkout on PYTHONPATH).
SIZES = {
    name: {key: ARCHITECTURE_PRESETS[name][key] for key in SIZE_KEYS}
    for name in ("albert_base", "albert_large", "albert_xlarge", "albert_xxlarge")
}
TINY = {
    "num_layers": 2,
    "hidden_dim": 64,
    "num_heads": 4,
    "intermediate_dim": 128,
    "embedding_dim": 32,
}


def model_size(args) -> dict:
    """The backbone's shape for `args.preset` (or the tiny one), vocabulary and embedding."""
    size = dict(TINY) if args.tiny else {**SIZES[args.preset], "embedding_dim": 128}
    size["vocabulary_size"] = args.vocabulary_size
    return size


# === One peer, in its own process ===
def ours(args, batch, size, backend: str):
    import keras

    import albert_keras as ak

    keras.utils.set_random_seed(args.seed)
    backbone = ak.AlbertBackbone(
        **size, max_sequence_length=max(args.seq_length, 512), dropout=0.0, dtype=args.policy
    )
    pretrainer = ak.AlbertPretrainer(backbone, sentence_objective="sop")
    pretrainer.compile(
        optimizer=keras.optimizers.AdamW(LEARNING_RATE, weight_decay=WEIGHT_DECAY),
        jit_compile=True if backend == "tensorflow" else "auto",
    )
    return keras_fit_steps(pretrainer, batch, None, args)


def keras_hub(args, batch, size):
    import keras
    import keras_hub

    keras.utils.set_random_seed(args.seed)
    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=size["vocabulary_size"],
        num_layers=size["num_layers"],
        num_heads=size["num_heads"],
        num_groups=1,
        num_inner_repetitions=1,
        embedding_dim=size["embedding_dim"],
        hidden_dim=size["hidden_dim"],
        intermediate_dim=size["intermediate_dim"],
        dropout=0.0,
        max_sequence_length=max(args.seq_length, 512),
        dtype=args.policy,
    )
    masked_lm = keras_hub.models.AlbertMaskedLM(backbone, preprocessor=None)
    masked_lm.compile(
        optimizer=keras.optimizers.AdamW(LEARNING_RATE, weight_decay=WEIGHT_DECAY),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        weighted_metrics=[],
    )
    x = {
        "token_ids": batch[INPUT_IDS],
        "padding_mask": batch[INPUT_MASK].astype(bool),
        "segment_ids": batch[SEGMENT_IDS],
        "mask_positions": batch[MASKED_LM_POSITIONS],
    }
    return keras_fit_steps(masked_lm, x, (batch[MASKED_LM_IDS], batch[MASKED_LM_WEIGHTS]), args)


def keras_fit_steps(model, x, labels, args):
    """`run(steps)`: one `fit` over the batch repeated in memory, as a user trains."""
    import numpy as np

    repeats = max(args.steps, args.warmup)
    data = {name: np.concatenate([value] * repeats) for name, value in x.items()}
    y = weights = None
    if labels is not None:
        y, weights = (np.concatenate([value] * repeats) for value in labels)

    def run(steps: int) -> None:
        model.fit(
            data,
            y,
            sample_weight=weights,
            batch_size=args.batch_size,
            steps_per_epoch=steps,
            shuffle=False,
            verbose=0,
        )

    return run


def hugging_face(args, batch, size):
    import torch
    import transformers

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not args.tiny:
        raise RuntimeError("PyTorch sees no CUDA device")
    torch.manual_seed(args.seed)
    config = transformers.AlbertConfig(
        vocab_size=size["vocabulary_size"],
        embedding_size=size["embedding_dim"],
        hidden_size=size["hidden_dim"],
        num_hidden_layers=size["num_layers"],
        num_attention_heads=size["num_heads"],
        intermediate_size=size["intermediate_dim"],
        hidden_act="gelu_new",
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        max_position_embeddings=max(args.seq_length, 512),
    )
    model = transformers.AutoModelForPreTraining.from_config(config, attn_implementation="sdpa")
    model = model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(
        model.parameters(), LEARNING_RATE, weight_decay=WEIGHT_DECAY, fused=device == "cuda"
    )
    # HF's MLM labels: the masked positions' ids, -100 (ignored) elsewhere.
    labels = torch.full(batch[INPUT_IDS].shape, -100, dtype=torch.long)
    positions = torch.as_tensor(batch[MASKED_LM_POSITIONS], dtype=torch.long)
    labels.scatter_(1, positions, torch.as_tensor(batch[MASKED_LM_IDS], dtype=torch.long))
    inputs = {  # HF's argument names
        "input_ids": torch.as_tensor(batch[INPUT_IDS], dtype=torch.long),
        "attention_mask": torch.as_tensor(batch[INPUT_MASK], dtype=torch.long),
        "token_type_ids": torch.as_tensor(batch[SEGMENT_IDS], dtype=torch.long),
        "labels": labels,
        "sentence_order_label": torch.as_tensor(batch[SENTENCE_LABELS][:, 0]).long(),
    }
    inputs = {name: value.to(device) for name, value in inputs.items()}
    dtype = torch.bfloat16 if args.policy == "mixed_bfloat16" else torch.float32

    def step():
        with torch.autocast(device, dtype=dtype, enabled=dtype != torch.float32):
            loss = model(**inputs).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    if args.compile:
        step = torch.compile(step)

    def run(steps: int) -> None:
        for _ in range(steps):
            loss = step()
        loss.item()  # waits for the device

    return run


def device_facts(peer: str) -> tuple[str, str]:
    """(device name, stack versions) as the peer's framework sees them."""
    if peer == "hugging-face-torch":
        import torch
        import transformers

        name = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
        return name, f"torch {torch.__version__}, transformers {transformers.__version__}"
    import keras

    if keras.backend.backend() == "jax":
        import jax

        device = jax.devices()[0]
        versions = f"jax {jax.__version__}, keras {keras.__version__}"
        if peer.startswith("keras-hub"):
            import keras_hub

            versions += f", keras-hub {keras_hub.__version__}"
        return device.device_kind, versions
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    name = tf.config.experimental.get_device_details(gpus[0]).get("device_name") if gpus else "cpu"
    return name or "GPU", f"tensorflow {tf.__version__}, keras {keras.__version__}"


def run_peer(args) -> dict:
    """Times one peer in this process; returns its figures (printed as the last JSON line)."""
    size = model_size(args)
    batch = random_batch(
        args.batch_size, args.seq_length, size["vocabulary_size"], args.num_predictions, args.seed
    )
    if args.peer == "hugging-face-torch":
        run = hugging_face(args, batch, size)
    elif args.peer == "keras-hub-jax":
        run = keras_hub(args, batch, size)
    else:
        run = ours(args, batch, size, BACKENDS[args.peer])
    run(args.warmup)  # compiles
    seconds = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        run(args.steps)
        seconds.append((time.perf_counter() - start) / args.steps)
    name, versions = device_facts(args.peer)
    return {"seconds": statistics.median(seconds), "device": name, "versions": versions}


# === The driver: each peer in a fresh process ===
def peer_in_process(args, peer: str, preset: str) -> dict:
    """`{"seconds": ...}` from a child process, or `{"skipped": reason}`."""
    argv = [sys.executable, os.path.abspath(__file__), "--peer", peer, "--preset", preset]
    for name in ("batch_size", "seq_length", "num_predictions", "steps", "rounds", "warmup"):
        argv += [f"--{name}", str(getattr(args, name))]
    argv += ["--vocabulary_size", str(args.vocabulary_size), "--policy", args.policy]
    argv += ["--tiny"] * args.tiny + ["--no_compile"] * (not args.compile)
    env = {**os.environ, "KERAS_BACKEND": BACKENDS.get(peer, "jax")}
    try:
        child = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=args.peer_timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"skipped": f"no result within --peer_timeout {args.peer_timeout} s"}
    lines = child.stdout.strip().splitlines()
    if child.returncode == 0 and lines:
        return json.loads(lines[-1])
    return {"skipped": why_not(child.stderr)}


def why_not(stderr: str) -> str:
    """The child's last error line, said plainly for a missing stack."""
    last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "exited non-zero")
    if "ModuleNotFoundError" in last:
        return f"the device lacks it ({last.split(': ', 1)[-1]})"
    return last.strip()[:200]


def peak(device: str, policy: str) -> float | None:
    dtype = "bfloat16" if policy == "mixed_bfloat16" else "float32"
    for name, peaks in PEAK_FLOPS:
        if name.lower() in device.lower():
            return peaks.get(dtype)
    return None


def table(args, preset: str, results: dict) -> list[str]:
    """The preset's table as text lines (markdown)."""
    size = model_size(argparse.Namespace(**{**vars(args), "preset": preset}))
    flop_args = argparse.Namespace(seq_length=args.seq_length, **size)
    step_flops = args.batch_size * train_flops_per_sequence(flop_args, args.num_predictions)
    tokens = args.batch_size * args.seq_length
    timed = {peer: r for peer, r in results.items() if "seconds" in r}
    lines = [
        (
            f"{'tiny' if args.tiny else preset}: L{size['num_layers']} H{size['hidden_dim']} "
            f"A{size['num_heads']} E{size['embedding_dim']} I{size['intermediate_dim']} "
            f"V{size['vocabulary_size']}, batch {args.batch_size} x {args.seq_length}, "
            f"{args.policy}, {step_flops / 1e12:.3f} model TFLOP per step"
        ),
        "",
        "| peer | device | ms/step | tokens/s | TFLOP/s | MFU | x fastest other | stack |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for peer, result in timed.items():
        seconds = result["seconds"]
        device_peak = peak(result["device"], args.policy)
        others = [r["seconds"] for p, r in timed.items() if p != peer]
        lines.append(
            f"| {peer} | {result['device']} | {seconds * 1e3:.1f} | {tokens / seconds:,.0f} | "
            f"{step_flops / seconds / 1e12:.2f} | "
            f"{f'{step_flops / seconds / device_peak:.1%}' if device_peak else '- (peak unknown)'}"
            f" | {f'{min(others) / seconds:.2f}' if others else '-'} | {result['versions']} |"
        )
    for peer, result in results.items():
        if "skipped" in result:
            lines.append(f"| {peer} | not run: {result['skipped']} | | | | | | |")
    return lines


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="albert_base,albert_large", help="comma-separated")
    parser.add_argument(
        "--peers", default=",".join(PEERS), help="comma-separated: " + ", ".join(PEERS)
    )
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--seq_length", type=int, default=512)
    parser.add_argument("--num_predictions", type=int, default=20, help="masked positions")
    parser.add_argument("--vocabulary_size", type=int, default=30000)
    parser.add_argument("--policy", default="mixed_bfloat16", help="mixed_bfloat16 or float32")
    parser.add_argument("--steps", type=int, default=20, help="steps per timed round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps (compilation)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peer_timeout", type=int, default=240, help="seconds per peer")
    parser.add_argument(
        "--no_compile",
        dest="compile",
        action="store_false",
        help="Hugging Face without torch.compile",
    )
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="L2 H64, batch 4 x 64, float32, 2 steps: a smoke run for CPUs",
    )
    parser.add_argument("--peer", choices=PEERS, help=argparse.SUPPRESS)  # a child's peer
    parser.add_argument("--preset", default="albert_base", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.tiny:
        args.batch_size, args.seq_length, args.steps, args.rounds, args.warmup = 4, 64, 2, 1, 1
        args.policy, args.vocabulary_size, args.compile = "float32", 1000, False
        args.presets = args.presets.split(",")[0]
    unknown = set(args.peers.split(",")) - set(PEERS)
    if unknown:
        parser.error(f"--peers: unknown {sorted(unknown)}; choose from {', '.join(PEERS)}")
    unknown = set(args.presets.split(",")) - set(SIZES)
    if unknown:
        parser.error(f"--presets: unknown {sorted(unknown)}; choose from {', '.join(SIZES)}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.peer:
        print(json.dumps(run_peer(args)))
        return 0
    for preset in args.presets.split(","):
        results = {peer: peer_in_process(args, peer, preset) for peer in args.peers.split(",")}
        print("\n".join(table(args, preset, results)) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
