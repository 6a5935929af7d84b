"""Pretraining step speed: ours (MLM + SOP) vs keras-hub's AlbertMaskedLM vs HF (torch).

    .venv/bin/python benchmarks/train_step.py                  # L6 H256 E128 I1024, 16 x 128
    .venv/bin/python benchmarks/train_step.py --precision float32 --rounds 7

With no flags it prints three tables from one run: **at the defaults a user gets** (each peer
as it comes: ours in what `--mixed_precision auto` picks on this machine, keras-hub and Hugging
Face in float32, TensorFlow's default build with oneDNN as it comes), then **at matched
precision**, float32 and bfloat16 (keras-hub under the `mixed_bfloat16` policy, HF under
`torch.autocast("cpu", torch.bfloat16)`, PyTorch's CPU mixed precision). On a CPU without
AVX512_BF16 or AMX-BF16 the bfloat16 table is left out unless `--precision` names it: every
peer would emulate bfloat16 there (HF's autocast step took 37 s on an AVX2 EPYC).

Every peer trains on the same synthetic batch (full-length sequences, 20 masked positions) with
the same optimizer settings (AdamW 1e-4, weight decay 0.01, epsilon 1e-6, gradients clipped to
global norm 1): ours through `AlbertPretrainer.train_on_batch` (MLM + SOP, its own loss and
metrics), keras-hub's `AlbertMaskedLM.train_on_batch` (MLM only, its default loss and weighted
accuracy), and Hugging Face's `AlbertForPreTraining` (MLM + SOP, eager torch, its default
attention) when `torch` and `transformers` import. A TensorFlow matmul is timed in the same
rounds, so the model FLOPs/s can be read as a fraction of what this machine does on a matmul
right now. Peers alternate round by round; the tables show medians and paired ratios.
"""

import argparse
import functools
import os
import sys

from _timing import (
    add_model_arguments,
    alternate,
    backbone_config,
    describe,
    hugging_face_config,
    matmul_runner,
    median_timing,
    paired_speedup,
    print_table,
    random_batch,
    set_environment,
    step_runner,
    train_flops_per_sequence,
    wanted,
)

LEARNING_RATE = 1e-4


def keras_optimizer():
    import keras

    return keras.optimizers.AdamW(
        learning_rate=LEARNING_RATE, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0
    )


def ours(args, batch, policy: str):
    import keras
    import tensorflow as tf

    import albert_keras as ak

    keras.utils.set_random_seed(args.seed)
    pretrainer = ak.AlbertPretrainer(
        ak.AlbertBackbone(**backbone_config(args), dtype=policy), sentence_objective="sop"
    )
    pretrainer.compile(optimizer=keras_optimizer(), jit_compile=args.xla == "on")
    x = {key: tf.constant(value) for key, value in batch.items()}
    count_traces(pretrainer)
    return step_runner(lambda: pretrainer.train_on_batch(x)), pretrainer


def count_traces(model):
    """Counts Python calls of `model.call` in `model.trace_count` (graph mode: traces only)."""
    model.trace_count = 0
    call = model.call

    @functools.wraps(call)
    def counted(*args, **kwargs):
        model.trace_count += 1
        return call(*args, **kwargs)

    model.call = counted


def keras_hub_masked_lm(args, batch, policy: str = "float32"):
    import keras
    import keras_hub
    import tensorflow as tf

    keras.utils.set_random_seed(args.seed)
    config = backbone_config(args)
    masked_lm = keras_hub.models.AlbertMaskedLM(
        keras_hub.models.AlbertBackbone(**config, dtype=policy), preprocessor=None
    )
    masked_lm.compile(optimizer=keras_optimizer(), jit_compile=args.xla == "on")
    x = {
        "token_ids": tf.constant(batch["input_ids"]),
        "segment_ids": tf.constant(batch["segment_ids"]),
        "padding_mask": tf.constant(batch["input_mask"]),
        "mask_positions": tf.constant(batch["masked_lm_positions"]),
    }
    y = tf.constant(batch["masked_lm_ids"])
    weights = tf.constant(batch["masked_lm_weights"])
    return step_runner(lambda: masked_lm.train_on_batch(x, y, sample_weight=weights))


def hugging_face(args, batch, bfloat16: bool = False):
    """HF's AlbertForPreTraining in eager torch, or None when torch/transformers are missing;
    `bfloat16`: the forward under `torch.autocast("cpu", torch.bfloat16)` (weights and the
    optimizer stay float32, as Keras's mixed policies keep them)."""
    try:
        import torch
        from transformers import AlbertForPreTraining
    except ImportError:
        return None
    torch.manual_seed(args.seed)
    config = hugging_face_config(args)
    model = AlbertForPreTraining(config).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01, eps=1e-6)
    labels = torch.full(batch["input_ids"].shape, -100, dtype=torch.long)
    positions = torch.from_numpy(batch["masked_lm_positions"]).long()
    labels.scatter_(1, positions, torch.from_numpy(batch["masked_lm_ids"]).long())
    inputs = {
        "input_ids": torch.from_numpy(batch["input_ids"]).long(),
        "attention_mask": torch.from_numpy(batch["input_mask"]).long(),
        "token_type_ids": torch.from_numpy(batch["segment_ids"]).long(),
        "labels": labels,
        "sentence_order_label": torch.from_numpy(batch["next_sentence_labels"][:, 0]).long(),
    }

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bfloat16):
            loss = model(**inputs).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    return step_runner(step)


def step_matmuls(args, num_predictions: int, as_ours: bool = False) -> list[tuple]:
    """The matmuls of one training step of our model, forward and backward, as
    (a_shape, b_shape, transpose_a, transpose_b, count): Dense layers as (tokens, in) @ (in, out)
    with dX = dY @ W^T and dW = X^T @ dY, attention as (batch * heads) batched products in
    the layout our TensorFlow attention uses, and the MLM head at the masked positions only.

    `as_ours`: the last layer as `AlbertPretrainer` computes it, on the masked rows and [CLS]
    only (keys and values still from every row), and the FFN's H -> I input gradient against a
    transposed copy of the kernel (`fast_paths.widening_matmul`: no `transpose_b`); else every
    layer on every row with TensorFlow's gradients, as keras-hub computes it."""
    t = args.batch_size * args.seq_length
    h, e, i, v, layers = (
        args.hidden_dim,
        args.embedding_dim,
        args.intermediate_dim,
        args.vocabulary_size,
        args.num_layers,
    )
    heads, length = args.batch_size * args.num_heads, args.seq_length
    d = h // args.num_heads
    shapes = []

    def dense(rows, fan_in, fan_out, count):
        shapes.append(((rows, fan_in), (fan_in, fan_out), False, False, count))  # forward
        if as_ours and (fan_in, fan_out) == (h, i):  # dX against the kernel's transposed copy
            shapes.append(((rows, fan_out), (fan_out, fan_in), False, False, count))
        else:
            shapes.append(((rows, fan_out), (fan_in, fan_out), False, True, count))  # dX
        shapes.append(((rows, fan_in), (rows, fan_out), True, False, count))  # dW

    def attention(queries, count):
        # Scores q @ k^T and context p @ v, each with its two backward products.
        shapes.extend(
            [
                ((heads, queries, d), (heads, d, length), False, False, count),
                ((heads, queries, length), (heads, d, length), False, True, count),  # dq
                ((heads, queries, d), (heads, queries, length), True, False, count),  # dk^T
                ((heads, queries, length), (heads, length, d), False, False, count),
                ((heads, queries, d), (heads, length, d), False, True, count),  # dprobs
                ((heads, queries, length), (heads, queries, d), True, False, count),  # dv
            ]
        )

    full_layers = layers - 1 if as_ours else layers
    for fan_in, fan_out in ((h, 3 * h), (h, h), (h, i), (i, h)):
        dense(t, fan_in, fan_out, full_layers)
    attention(length, full_layers)
    if as_ours:
        rows = args.batch_size * (num_predictions + 1)  # the masked positions and [CLS]
        dense(t, h, 2 * h, 1)  # keys and values of every row
        for fan_in, fan_out in ((h, h), (h, h), (h, i), (i, h)):  # query, output, FFN
            dense(rows, fan_in, fan_out, 1)
        attention(num_predictions + 1, 1)
    if e != h:
        dense(t, e, h, 1)
    p = args.batch_size * num_predictions
    dense(p, h, e, 1)  # the head's transform
    # Tied output: logits = x @ table^T; dx = g @ table; dtable = g^T @ x.
    shapes += [
        ((p, e), (v, e), False, True, 1),
        ((p, v), (v, e), False, False, 1),
        ((p, v), (p, e), True, False, 1),
    ]
    return shapes


def step_matmuls_runner(shapes: list[tuple], seed: int):
    """Runs each of a step's matmuls alone (its own graph, back to back): the step's floor if
    nothing but its matmuls took time. Returns (runner, FLOPs per step)."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    calls, flops = [], 0.0
    for a_shape, b_shape, transpose_a, transpose_b, count in shapes:
        a = tf.constant(rng.standard_normal(a_shape, dtype=np.float32))
        b = tf.constant(rng.standard_normal(b_shape, dtype=np.float32))
        # One corner of the product is returned: enough to keep it, not a copy of it.
        product = tf.function(
            lambda a=a, b=b, ta=transpose_a, tb=transpose_b: tf.reduce_sum(
                tf.matmul(a, b, transpose_a=ta, transpose_b=tb)[..., :1, :1]
            )
        )
        product().numpy()
        rows = a_shape[-1] if transpose_a else a_shape[-2]
        inner = a_shape[-2] if transpose_a else a_shape[-1]
        cols = b_shape[-2] if transpose_b else b_shape[-1]
        batch = a_shape[0] if len(a_shape) == 3 else 1
        flops += 2.0 * batch * rows * inner * cols * count
        calls += [product] * count

    def one_step():
        for product in calls:
            product()  # eager calls of CPU graphs return when done

    return step_runner(one_step), flops


PRECISION_VIEWS = ("defaults", "float32", "bfloat16")


def peer_runners(args, batch, views: list[str], default_policy: str) -> dict:
    """The model runners the tables need, named "PEER POLICY" (each built once)."""
    wanted_policies = {"ours": set(), "keras-hub": set(), "hf": set()}
    if "defaults" in views:
        wanted_policies["ours"].add(default_policy)
        wanted_policies["keras-hub"].add("float32")  # keras-hub's and HF's defaults
        wanted_policies["hf"].add("float32")
    for view, policy in (("float32", "float32"), ("bfloat16", "mixed_bfloat16")):
        if view in views:
            for policies in wanted_policies.values():
                policies.add(policy)
    runners, models = {}, {}
    for policy in sorted(wanted_policies["ours"]):
        if wanted(args, "ours"):
            runners[f"ours {policy}"], models[f"ours {policy}"] = ours(args, batch, policy)
    for policy in sorted(wanted_policies["keras-hub"]):
        if wanted(args, "keras-hub"):
            runners[f"keras-hub {policy}"] = keras_hub_masked_lm(args, batch, policy)
    for policy in sorted(wanted_policies["hf"]):
        if wanted(args, "hf"):
            runner = hugging_face(args, batch, bfloat16=policy != "float32")
            if runner is not None:
                runners[f"hf {policy}"] = runner
    return runners, models


def view_rows(view: str, default_policy: str) -> list[tuple[str, str]]:
    """(label, runner name) of each peer in one table."""
    if view == "defaults":
        return [
            (f"ours ({default_policy}: --mixed_precision auto)", f"ours {default_policy}"),
            ("keras-hub (float32)", "keras-hub float32"),
            ("HF (float32, eager)", "hf float32"),
        ]
    policy = "float32" if view == "float32" else "mixed_bfloat16"
    hf = "HF (float32, eager)" if view == "float32" else "HF (torch.autocast bfloat16)"
    return [
        (f"ours ({policy})", f"ours {policy}"),
        (f"keras-hub ({policy})", f"keras-hub {policy}"),
        (hf, f"hf {policy}"),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser, batch_size=16)
    parser.add_argument("--num_predictions", type=int, default=20, help="masked positions")
    parser.add_argument(
        "--matmul", default="1024,1024,1024", help="m,k,n of the reference fp32 matmul"
    )
    parser.add_argument(
        "--precision",
        default=None,
        help="tables to print: defaults (each peer as it comes), float32, bfloat16 (matched); "
        "by default all three, bfloat16 only on a CPU that computes it natively",
    )
    args = parser.parse_args(argv)
    views = [view for view in (args.precision or ",".join(PRECISION_VIEWS)).split(",") if view]
    unknown = sorted(set(views) - set(PRECISION_VIEWS))
    if unknown:
        parser.error(f"--precision {', '.join(unknown)}: choose from {', '.join(PRECISION_VIEWS)}")
    set_environment(args)

    import tensorflow as tf

    from albert_keras.training.precision import bf16_cpu_flags, choose_precision

    default_policy, why = choose_precision("auto", None)
    notes = []
    if args.precision is None and not bf16_cpu_flags():
        # Every peer would emulate it: HF's autocast step took 37 s here (AMD EPYC, AVX2).
        views.remove("bfloat16")
        notes.append(
            "bfloat16 (matched): not run by default, since this CPU has no AVX512_BF16 or "
            "AMX-BF16 and every peer would emulate it; --precision bfloat16 times it anyway"
        )
    batch = random_batch(
        args.batch_size, args.seq_length, args.vocabulary_size, args.num_predictions, args.seed
    )
    runners, models = peer_runners(args, batch, views, default_policy)
    if wanted(args, "hf") and not any(name.startswith("hf ") for name in runners):
        notes.append("hf: skipped (torch / transformers not importable)")
    # Two references: a square matmul (near this CPU's best rate) and the model's own FFN
    # shape (batch * time, H) @ (H, I), the rate its biggest matmuls can reach.
    m, k, n = (int(v) for v in args.matmul.split(","))
    ffn = (args.batch_size * args.seq_length, args.hidden_dim, args.intermediate_dim)
    references = {f"matmul {m}x{k}x{n}": (m, k, n), "matmul {}x{}x{} (FFN)".format(*ffn): ffn}
    matmul_flops = {}
    for name, shape in references.items():
        runners[name], matmul_flops[name] = matmul_runner(*shape, args.seed)
    floor = "the step's matmuls alone"
    runners[floor], floor_flops = step_matmuls_runner(
        step_matmuls(args, args.num_predictions), args.seed
    )
    own_floor = "ours' own matmuls alone"
    runners[own_floor], own_floor_flops = step_matmuls_runner(
        step_matmuls(args, args.num_predictions, as_ours=True), args.seed
    )

    print(f"train step: {describe(args)}, {args.num_predictions} masked positions")
    print(f"TensorFlow {tf.__version__}, intra-op threads: all {os.cpu_count()} cores")
    print(f"--mixed_precision auto on this machine: {default_policy} ({why})")
    traces_before = {}
    for name, model in models.items():
        runners[name](1)  # builds and traces
        traces_before[name] = model.trace_count
    # Each matmul runs enough calls to take about as long as one model step.
    per_round = alternate(
        runners,
        args.rounds,
        args.steps,
        args.warmup,
        steps_for={name: 20 * args.steps for name in references},
    )
    rates = {
        name: matmul_flops[name] / median_timing(per_round.pop(name)).wall for name in references
    }
    floor_seconds = median_timing(per_round.pop(floor)).wall
    own_floor_seconds = median_timing(per_round.pop(own_floor)).wall
    tokens = args.batch_size * args.seq_length
    step_flops = args.batch_size * train_flops_per_sequence(args, args.num_predictions)

    for view in views:
        rows_of = view_rows(view, default_policy)
        present = [(label, name) for label, name in rows_of if name in per_round]
        if not present:
            continue
        title = {
            "defaults": "at the defaults a user gets (no flags)",
            "float32": "matched precision: float32",
            "bfloat16": "matched precision: bfloat16 (mixed: float32 weights)",
        }[view]
        print(f"\n{title}")
        keras_hub_name, hf_name = rows_of[1][1], rows_of[2][1]

        def ratio(name, peer, field):
            if peer not in per_round:
                return "-"
            return f"{paired_speedup(per_round[name], per_round[peer], field):.2f}"

        rows = []
        for label, name in present:
            timing = median_timing(per_round[name])
            rate = step_flops / timing.wall
            rows.append(
                [
                    label,
                    f"{timing.wall * 1e3:.0f}",
                    f"{tokens / timing.wall:.0f}",
                    ratio(name, keras_hub_name, "wall"),
                    ratio(name, hf_name, "wall"),
                    f"{timing.cpu * 1e3:.0f}",
                    ratio(name, keras_hub_name, "cpu"),
                    ratio(name, hf_name, "cpu"),
                    f"{rate / 1e9:.1f}",
                    *(f"{rate / r:.0%}" for r in rates.values()),
                    f"{floor_seconds / timing.wall:.0%}",
                ]
            )
        print_table(
            [
                "peer",
                "ms/step",
                "tokens/s",
                "x keras-hub",
                "x hf",
                "cpu ms/step",
                "cpu x keras-hub",
                "cpu x hf",
                "model GFLOP/s",
                "of square",
                "of FFN",
                "of matmuls alone",
            ],
            rows,
        )
    print()
    for name, rate in rates.items():
        print(f"tf {name} fp32: {rate / 1e9:.1f} GFLOP/s")
    floor_rate = floor_flops / floor_seconds
    print(
        f"{floor} (fp32): {floor_seconds * 1e3:.0f} ms per step, {floor_rate / 1e9:.1f} GFLOP/s"
        f" ({floor_rate / next(iter(rates.values())):.0%} of square): the most any fp32 TF step"
        " of this model could reach with these kernels; 'of matmuls alone' = that time / the"
        " step's time"
    )
    ours_float32 = per_round.get("ours float32")
    own_share = (
        f"; ours float32 takes {median_timing(ours_float32).wall / own_floor_seconds:.0%} of it"
        if ours_float32
        else ""
    )
    print(
        f"{own_floor} (fp32, as AlbertPretrainer computes them: the last layer on the masked"
        " rows and [CLS], the FFN's input gradient without transpose_b):"
        f" {own_floor_seconds * 1e3:.0f} ms per step,"
        f" {own_floor_flops / 1e9:.1f} GFLOP{own_share}"
    )
    print(
        f"model FLOPs per step: {step_flops / 1e9:.1f} G (3x forward matmuls, MLM at the"
        " masked positions); x = speed relative to the peer in the same table: median over"
        " rounds of (its time / this time)"
    )
    for name, model in models.items():
        # `call` runs in Python only while building or tracing, never in a traced step.
        print(
            f"{name}: AlbertPretrainer.call ran in Python {traces_before[name]} time(s) while"
            f" building and tracing, {model.trace_count - traces_before[name]} time(s) during"
            " timing"
        )
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
