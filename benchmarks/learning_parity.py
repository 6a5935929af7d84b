"""Learning parity: albert-keras and Hugging Face's AlbertForPreTraining, trained side by side.

    .venv/bin/python benchmarks/learning_parity.py                 # tiny records it writes
    .venv/bin/python benchmarks/learning_parity.py --steps 30 --eval_at 10,30 --optimizer adam
    .venv/bin/python benchmarks/learning_parity.py --records 'r/train/*.tfrecord' \\
        --heldout 'r/heldout/*.tfrecord' --vocabulary_size 30000 --seq_length 128

One random initialisation of our `AlbertPretrainer` is converted into HF's
`AlbertForPreTraining` (`official_from_model` + `write_hf_folder`, the project's own
converters), both in float32 without dropout. Both then train on the same batches from our
reader (`pipelines.read_pretraining_records`, seeded) with the same optimizer:

- `adam`: stock `keras.optimizers.Adam` in `AlbertPretrainer.fit`'s train step (which hands it
  dense embedding gradients), and Keras's Adam formula written out for torch;
- `lamb`: our `Lamb` (the official ALBERT LAMB) and the official LAMB written out for torch,
  with one trust ratio per HF parameter (separate q, k and v): what our fused `qkv` variable
  must equal.

It prints the step-0 loss and gradient parity, the training losses of both and their largest
difference, and the held-out MLM and SOP accuracy of both at each `--eval_at` step. Without
`--records` it first writes small records under `--workdir` from text it extracts from the
docstrings of Python's standard library and installed packages (the demo's corpus, ~1 MB:
13,707 training and 822 held-out examples at the defaults), with a 2,000-piece SentencePiece
vocabulary trained on it. The MLM loss is the official one (`sum(w * ce) / (sum(w) + 1e-5)`) on both sides;
the losses printed are the `fit` metrics' (`sum(w * ce) / sum(w)` plus the SOP mean).
"""

import argparse
import itertools
import pathlib
import re
import shlex
import sys
import tempfile

import numpy as np

# Keras's Adam and LAMB settings shared by both sides.
BETA_1, BETA_2 = 0.9, 0.999
ADAM_EPSILON, LAMB_EPSILON, WEIGHT_DECAY, CLIP_NORM = 1e-7, 1e-6, 0.01, 1.0
LEARNING_RATES = {"adam": 1e-3, "lamb": 1e-2}
OPTIMIZERS = ("adam", "lamb")


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--records", help="glob of training records (default: tiny records written here)")
    add("--heldout", help="glob of held-out records (with --records)")
    add("--vocabulary_size", type=int, help="the records' vocabulary size (with --records)")
    add("--workdir", help="where the default records and the HF folder go (default: a temp dir)")
    add("--optimizer", choices=(*OPTIMIZERS, "both"), default="both")
    add("--learning_rate", type=float, help="default 1e-3 (adam), 1e-2 (lamb)")
    add("--steps", type=int, default=1000)
    add("--eval_at", default="250,500,1000", help="comma-separated steps")
    add("--heldout_batches", type=int, default=20)
    add("--batch_size", type=int, default=32)
    add("--seq_length", type=int, default=64)
    add("--max_predictions", type=int, default=10)
    add("--num_layers", type=int, default=4)
    add("--num_heads", type=int, default=2)
    add("--embedding_dim", type=int, default=64)
    add("--hidden_dim", type=int, default=128)
    add("--intermediate_dim", type=int, default=512)
    add("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    eval_at = [int(s) for s in args.eval_at.split(",") if s.strip()]
    args.eval_at = sorted(s for s in eval_at if 0 < s <= args.steps)
    if (args.records is None) != (args.heldout is None) or (
        args.records is not None and args.vocabulary_size is None
    ):
        parser.error("--records, --heldout and --vocabulary_size go together")
    if args.embedding_dim == args.hidden_dim:
        # HF always has the E -> H projection; our model has none when E == H, so HF would
        # train an identity that ours does not have.
        parser.error("--embedding_dim must differ from --hidden_dim (HF always projects E -> H)")
    return args


def tiny_records(workdir: pathlib.Path, args) -> tuple[str, str, int]:
    """Writes records from installed docstrings (the demo's corpus); returns (train, heldout, V)."""
    from _records import small_records  # beside this script, on sys.path when it runs

    return small_records(
        workdir,
        "docstrings",
        seq_length=args.seq_length,
        max_predictions=args.max_predictions,
        seed=args.seed,
        megabytes=0.3,
        vocab_size=2000,
        dupe_factor=2,
    )


def batches(pattern: str, args, training: bool):
    """NumPy batches from our reader: endless and shuffled (seeded), or one held-out pass."""
    import pipelines

    dataset = pipelines.read_pretraining_records(
        pattern,
        args.batch_size,
        max_seq_length=args.seq_length,
        max_predictions_per_seq=args.max_predictions,
        shuffle=training,
        repeat=training,
        seed=args.seed,
    )
    return dataset.as_numpy_iterator()


def both_models(args, vocabulary_size: int, folder: pathlib.Path):
    """Our pretrainer (random init, seeded) and HF's AlbertForPreTraining holding its weights."""
    import keras
    import transformers

    from albert_keras.convert import official_from_model, write_hf_folder
    from albert_keras.models import AlbertBackbone, AlbertPretrainer

    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(args.seed)
    backbone = AlbertBackbone(
        vocabulary_size=vocabulary_size,
        num_layers=args.num_layers,
        num_heads=args.num_heads,
        embedding_dim=args.embedding_dim,
        hidden_dim=args.hidden_dim,
        intermediate_dim=args.intermediate_dim,
        max_sequence_length=args.seq_length,
    )
    ours = AlbertPretrainer(backbone, sentence_objective="sop")
    config, weights = official_from_model(ours)
    write_hf_folder(config, weights, folder)
    # No dropout anywhere, as ours: the SOP head's own rate (`classifier_dropout_prob`) too.
    hf = transformers.AlbertForPreTraining.from_pretrained(
        folder, attn_implementation="eager", classifier_dropout_prob=0.0
    )
    return ours, hf.train(), config


def hf_outputs(hf, batch):
    """HF's MLM logits at the masked positions (B, P, V) and SOP logits (B, 2), as torch."""
    import torch

    def tensor(name):
        return torch.tensor(batch[name], dtype=torch.long)  # a copy: tf.data's are read-only

    out = hf(
        input_ids=tensor("input_ids"),
        attention_mask=tensor("input_mask"),
        token_type_ids=tensor("segment_ids"),
    )
    positions = tensor("masked_lm_positions")
    index = positions[..., None].expand(-1, -1, out.prediction_logits.shape[-1])
    return torch.gather(out.prediction_logits, 1, index), out.sop_logits


def hf_losses(hf, batch):
    """(trained loss, reported loss): the official MLM normaliser, then the metrics' one."""
    import torch

    mlm_logits, sop_logits = hf_outputs(hf, batch)
    ids = torch.tensor(batch["masked_lm_ids"], dtype=torch.long)
    weights = torch.tensor(batch["masked_lm_weights"], dtype=torch.float32)
    per_position = torch.nn.functional.cross_entropy(
        mlm_logits.transpose(1, 2), ids, reduction="none"
    )
    labels = torch.tensor(batch["next_sentence_labels"], dtype=torch.long).reshape(-1)
    sop = torch.nn.functional.cross_entropy(sop_logits, labels)
    weighted = (per_position * weights).sum()
    trained = weighted / (weights.sum() + 1e-5) + sop
    return trained, float((weighted / weights.sum() + sop).detach())


def torch_step(name: str, parameters: dict, state: dict, learning_rate: float) -> None:
    """One step of Keras's Adam or of the official LAMB, on HF's parameters (by name)."""
    import torch

    from albert_keras.optimizers import OFFICIAL_EXCLUSIONS

    state["t"] = t = state.get("t", 0) + 1
    grads = {n: p.grad for n, p in parameters.items() if p.grad is not None}
    if name == "lamb":  # tf.clip_by_global_norm, as the official create_optimizer
        norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads.values()))
        scale = CLIP_NORM / max(float(norm), CLIP_NORM)
        grads = {n: g * scale for n, g in grads.items()}
    with torch.no_grad():
        for n, g in grads.items():
            p = parameters[n]
            m, v = state.setdefault(n, (torch.zeros_like(p), torch.zeros_like(p)))
            m.mul_(BETA_1).add_((1 - BETA_1) * g)
            v.mul_(BETA_2).add_((1 - BETA_2) * g * g)
            if name == "adam":  # keras.optimizers.Adam: bias correction folded into the rate
                alpha = learning_rate * (1 - BETA_2**t) ** 0.5 / (1 - BETA_1**t)
                p.sub_(alpha * m / (v.sqrt() + ADAM_EPSILON))
                continue
            excluded = any(re.search(pattern, n) for pattern in OFFICIAL_EXCLUSIONS)
            update = m / (v.sqrt() + LAMB_EPSILON)  # no bias correction
            if not excluded:
                update = update + WEIGHT_DECAY * p
                w_norm, u_norm = p.norm(), update.norm()
                if w_norm > 0 and u_norm > 0:
                    update = update * (w_norm / u_norm)
            p.sub_(learning_rate * update)


def keras_optimizer(name: str, learning_rate: float):
    import keras

    from albert_keras.optimizers import Lamb

    if name == "adam":
        return keras.optimizers.Adam(
            learning_rate, beta_1=BETA_1, beta_2=BETA_2, epsilon=ADAM_EPSILON
        )
    return Lamb(learning_rate, weight_decay=WEIGHT_DECAY, epsilon=LAMB_EPSILON)


def step_zero_parity(ours, hf, config, batch) -> dict:
    """Loss and every gradient of both models on one batch, compared under HF's names."""
    import keras
    import tensorflow as tf

    from albert_keras.convert import official_from_model
    from albert_keras.convert.hf_checkpoint import official_to_hf_names

    with tf.GradientTape() as tape:
        loss = ours.compute_loss(x=batch, y_pred=ours(batch, training=True))
    grads = tape.gradient(loss, ours.trainable_variables)
    # The converter cuts our gradients into official (then HF) names, through a twin model.
    twin = type(ours).from_config(ours.get_config())
    for variable, g in zip(twin.trainable_variables, grads):
        variable.assign(tf.convert_to_tensor(g))
    official_grads = official_from_model(twin)[1]
    hf.zero_grad()
    hf_loss, _ = hf_losses(hf, batch)
    hf_loss.backward()
    parameters = dict(hf.named_parameters())
    worst, largest = 0.0, 0.0
    for official, (name, transpose) in official_to_hf_names(config).items():
        if official in official_grads:
            want = official_grads[official].T if transpose else official_grads[official]
            got = parameters[name].grad.numpy()
            worst, largest = max(worst, np.abs(got - want).max()), max(largest, np.abs(want).max())
    hf.zero_grad()
    return {
        "loss_ours": float(keras.ops.convert_to_numpy(loss)),
        "loss_hf": float(hf_loss.detach()),
        "gradient_max_difference": float(worst),
        "gradient_max": float(largest),
    }


def weight_parity(ours, hf, config) -> float:
    """The largest difference between the two models' weights, under HF's names.

    The attention's key biases are left out: softmax ignores them, so their gradient is
    round-off, which Adam's normalisation turns into steps of about the learning rate, in
    different directions on the two sides, with no effect on any output.
    """
    from albert_keras.convert import official_from_model
    from albert_keras.convert.hf_checkpoint import official_to_hf_names

    weights, parameters = official_from_model(ours)[1], dict(hf.named_parameters())
    worst = 0.0
    for official, (name, transpose) in official_to_hf_names(config).items():
        if official in weights and not official.endswith("key/bias"):
            want = weights[official].T if transpose else weights[official]
            worst = max(worst, float(np.abs(parameters[name].detach().numpy() - want).max()))
    return worst


def heldout_accuracy(ours, hf, heldout: list) -> dict:
    """MLM accuracy (weighted masked positions) and SOP accuracy of both on the same batches."""
    import keras
    import torch

    hits = {"ours": np.zeros(2), "hf": np.zeros(2)}
    masked = sentences = 0.0
    for batch in heldout:
        outputs = ours(batch, training=False)
        with torch.no_grad():
            hf_mlm, hf_sop = hf_outputs(hf, batch)
        logits = {
            "ours": [
                keras.ops.convert_to_numpy(outputs[k]) for k in ("mlm_logits", "sentence_logits")
            ],
            "hf": [hf_mlm.numpy(), hf_sop.numpy()],
        }
        weights, labels = batch["masked_lm_weights"], batch["next_sentence_labels"].reshape(-1)
        for side, (mlm, sop) in logits.items():
            hits[side] += [
                ((mlm.argmax(-1) == batch["masked_lm_ids"]) * weights).sum(),
                (sop.argmax(-1) == labels).sum(),
            ]
        masked, sentences = masked + weights.sum(), sentences + len(labels)
    return {
        f"{side}_{task}": float(value / total)
        for side, values in hits.items()
        for task, value, total in zip(("mlm", "sop"), values, (masked, sentences))
    }


def train_side_by_side(args, name: str, records: tuple[str, str, int], folder) -> dict:
    """One optimizer: the step-0 parity, both loss curves and the held-out accuracies."""
    train, heldout_pattern, vocabulary_size = records
    ours, hf, config = both_models(args, vocabulary_size, pathlib.Path(folder) / f"hf_{name}")
    learning_rate = args.learning_rate or LEARNING_RATES[name]
    ours.compile(optimizer=keras_optimizer(name, learning_rate))
    heldout = list(itertools.islice(batches(heldout_pattern, args, False), args.heldout_batches))
    stream = batches(train, args, training=True)
    first = next(stream)
    result = {"optimizer": name, "learning_rate": learning_rate}
    result["step_zero"] = step_zero_parity(ours, hf, config, first)
    parameters, state = dict(hf.named_parameters()), {}
    result["losses"], result["heldout"] = [], {}
    batch = first
    for step in range(1, args.steps + 1):
        if step > 1:
            batch = next(stream)
        ours_loss = float(ours.train_on_batch(batch, return_dict=True)["loss"])
        hf.zero_grad()
        trained, reported = hf_losses(hf, batch)
        trained.backward()
        torch_step(name, parameters, state, learning_rate)
        result["losses"].append((ours_loss, reported))
        if step in args.eval_at:
            result["heldout"][step] = heldout_accuracy(ours, hf, heldout)
    result["max_loss_difference"] = max(abs(a - b) for a, b in result["losses"])
    result["weight_max_difference"] = weight_parity(ours, hf, config)
    return result


def print_result(result: dict) -> None:
    zero = result["step_zero"]
    print(f"\n== {result['optimizer']} (learning rate {result['learning_rate']:g})")
    print(
        f"step 0: loss ours {zero['loss_ours']:.7f} HF {zero['loss_hf']:.7f} "
        f"(|diff| {abs(zero['loss_ours'] - zero['loss_hf']):.1e}); gradients max |diff| "
        f"{zero['gradient_max_difference']:.1e} (largest gradient {zero['gradient_max']:.1e})"
    )
    print("step  loss ours  loss HF    |diff|   | held-out MLM ours / HF   SOP ours / HF")
    losses, shown = result["losses"], set(result["heldout"])
    for step in sorted(shown | {1, len(losses)} | set(range(0, len(losses) + 1, 100)) - {0}):
        a, b = losses[step - 1]
        line = f"{step:4d}  {a:.6f}   {b:.6f}   {abs(a - b):.1e}"
        if step in result["heldout"]:
            h = result["heldout"][step]
            line += (
                f"  | {h['ours_mlm']:.4f} / {h['hf_mlm']:.4f}"
                f"         {h['ours_sop']:.4f} / {h['hf_sop']:.4f}"
            )
        print(line)
    print(f"largest training-loss difference over {len(losses)} steps: "
          f"{result['max_loss_difference']:.1e}; weights after them: "
          f"{result['weight_max_difference']:.1e} (key biases aside)")  # fmt: skip


def main(argv=None) -> int:
    args = parse_arguments(argv)
    print("$ python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])]))
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="learning_parity_"))
    if args.records:
        records = (args.records, args.heldout, args.vocabulary_size)
    else:
        records = tiny_records(workdir, args)
        print(f"records written under {workdir} (vocabulary {records[2]} pieces)")
    names = OPTIMIZERS if args.optimizer == "both" else (args.optimizer,)
    for name in names:
        print_result(train_side_by_side(args, name, records, workdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
