"""Classifier inference speed: ours vs keras-hub's AlbertTextClassifier vs HF (torch).

    .venv/bin/python benchmarks/inference.py                   # L6 H256 E128 I1024, seq 128
    .venv/bin/python benchmarks/inference.py --num_layers 12 --hidden_dim 768 --num_heads 12 \
        --intermediate_dim 3072                                  # albert_base

The model alone, on token tensors at the full `--seq_length`. Serving (issue #34: the exported
SavedModel of each over raw strings, ours from `albert-keras export` and keras-hub's through
`keras.export.ExportArchive`, batch-1 p50 / p99 over 200 requests and batch-64 throughput, at
equal outputs) is the one question of `serving_latency.py`, which this script does not repeat:

    .venv/bin/python benchmarks/serving_latency.py

Two measurements per peer, each alternated round by round with the other peers (medians):
latency of one sequence (batch 1) and throughput at `--batch_size` (64) sequences. Keras peers
run `predict_on_batch` (the compiled predict function, as `model.predict` uses); Hugging Face's
`AlbertForSequenceClassification` runs eagerly under `torch.inference_mode` when `torch` and
`transformers` import. All peers have the same config, random weights and no dropout.

With `--models NAME=PATH,...` the peers are instead our classifiers on saved models (a
backbone, a pretrainer or a classifier `.keras`), e.g. a teacher, its distilled student and the
same student pretrained without a teacher; speedups are against the first one named:

    .venv/bin/python benchmarks/inference.py --seq_length 64 \
        --models teacher=run/model.keras,student=student/model.keras,plain=plain/model.keras
"""

import argparse
import sys

from _timing import (
    add_model_arguments,
    alternate,
    backbone_config,
    describe,
    hugging_face_config,
    median_timing,
    paired_speedup,
    print_table,
    random_batch,
    set_environment,
    step_runner,
    wanted,
)

NUM_CLASSES = 2


def keras_inputs(batch):
    import tensorflow as tf

    return {
        "token_ids": tf.constant(batch["input_ids"]),
        "segment_ids": tf.constant(batch["segment_ids"]),
        "padding_mask": tf.constant(batch["input_mask"]),
    }


def ours(args):
    import keras

    import albert_keras as ak

    keras.utils.set_random_seed(args.seed)
    model = ak.AlbertClassifier(ak.AlbertBackbone(**backbone_config(args)), NUM_CLASSES)
    model.compile(jit_compile=args.xla == "on")
    return model


def keras_hub_classifier(args):
    import keras
    import keras_hub

    keras.utils.set_random_seed(args.seed)
    model = keras_hub.models.AlbertTextClassifier(
        keras_hub.models.AlbertBackbone(**backbone_config(args)),
        NUM_CLASSES,
        preprocessor=None,
    )
    model.compile(jit_compile=args.xla == "on")
    return model


def saved_models(spec):
    """`"a=x.keras,b=y.keras"` -> {name: AlbertClassifier on that file's backbone}."""
    import keras

    import albert_keras as ak

    models = {}
    for item in spec.split(","):
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--models {item!r} is not NAME=PATH")
        loaded = keras.saving.load_model(path, compile=False)
        backbone = loaded if isinstance(loaded, ak.AlbertBackbone) else loaded.backbone
        model = ak.AlbertClassifier(backbone, NUM_CLASSES)
        model.compile()
        models[name] = model
    return models


def hugging_face(args):
    try:
        import torch
        from transformers import AlbertForSequenceClassification
    except ImportError:
        return None
    torch.manual_seed(args.seed)
    config = hugging_face_config(args, classifier_dropout_prob=0.0, num_labels=NUM_CLASSES)
    return AlbertForSequenceClassification(config).eval()


def hugging_face_runner(model, batch):
    import torch

    inputs = {
        "input_ids": torch.from_numpy(batch["input_ids"]).long(),
        "attention_mask": torch.from_numpy(batch["input_mask"]).long(),
        "token_type_ids": torch.from_numpy(batch["segment_ids"]).long(),
    }

    def step():
        with torch.inference_mode():
            return model(**inputs).logits.numpy()

    return step_runner(step)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_arguments(parser, batch_size=64)
    parser.add_argument(
        "--models",
        default="",
        help="NAME=PATH,... saved .keras models to time side by side instead of the peers "
        "(speedups against the first)",
    )
    args = parser.parse_args(argv)
    set_environment(args)

    small = random_batch(1, args.seq_length, args.vocabulary_size, 1, args.seed)
    large = random_batch(args.batch_size, args.seq_length, args.vocabulary_size, 1, args.seed)
    latency, throughput, notes = {}, {}, []
    if args.models:
        models = saved_models(args.models)
        first = next(iter(models.values())).backbone
        args.vocabulary_size = first.vocabulary_size
        small = random_batch(1, args.seq_length, args.vocabulary_size, 1, args.seed)
        large = random_batch(args.batch_size, args.seq_length, args.vocabulary_size, 1, args.seed)
        for name, model in models.items():
            backbone = model.backbone
            notes.append(
                f"{name}: L{backbone.num_layers} H{backbone.hidden_dim} E{backbone.embedding_dim} "
                f"I{backbone.intermediate_dim}, {backbone.count_params():,} parameters"
            )
            for runners, batch in ((latency, small), (throughput, large)):
                x = keras_inputs(batch)
                runners[name] = step_runner(lambda model=model, x=x: model.predict_on_batch(x))
        peers = [next(iter(models))]
    else:
        peers = ["keras-hub", "hf"]
    for name, make in (("ours", ours), ("keras-hub", keras_hub_classifier)):
        if args.models:
            break
        if wanted(args, name):
            model = make(args)
            for runners, batch in ((latency, small), (throughput, large)):
                x = keras_inputs(batch)
                runners[name] = step_runner(lambda model=model, x=x: model.predict_on_batch(x))
    if not args.models and wanted(args, "hf"):
        model = hugging_face(args)
        if model is None:
            notes.append("hf: skipped (torch / transformers not importable)")
        else:
            latency["hf"] = hugging_face_runner(model, small)
            throughput["hf"] = hugging_face_runner(model, large)

    if args.models:  # the saved models' configs are in the notes below the table
        print(
            f"inference: saved models, batch {args.batch_size} x {args.seq_length}, xla {args.xla}"
        )
    else:
        print(f"inference: {describe(args)}")
    print("batch 1 latency:")
    one = alternate(latency, args.rounds, 4 * args.steps, args.warmup)
    print(f"batch {args.batch_size} throughput:")
    many = alternate(throughput, args.rounds, args.steps, args.warmup)

    def speedup(per_round, name, peer):
        if peer not in per_round:
            return "-"
        return f"{paired_speedup(per_round[name], per_round[peer], 'wall'):.2f}"

    rows = [
        [
            name,
            f"{median_timing(one[name]).wall * 1e3:.1f}",
            *(speedup(one, name, peer) for peer in peers),
            f"{args.batch_size / median_timing(many[name]).wall:.1f}",
            *(speedup(many, name, peer) for peer in peers),
            f"{median_timing(many[name]).cpu / args.batch_size * 1e3:.1f}",
        ]
        for name in one
    ]
    print()
    print_table(
        [
            "peer",
            "batch-1 ms",
            *(f"x {peer}" for peer in peers),
            f"batch-{args.batch_size} seq/s",
            *(f"x {peer}" for peer in peers),
            "cpu ms/seq",
        ],
        rows,
    )
    print("x = speed relative to the peer: median over rounds of (its time / this time)")
    for note in notes:
        print(note)
    print("the exported SavedModels over strings (serving latency): benchmarks/serving_latency.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
