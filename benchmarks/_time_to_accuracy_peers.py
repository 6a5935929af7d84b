"""The three implementations `time_to_accuracy.py` trains, from one init, at their defaults.

Each peer is a `Peer`: `train(batches)` runs one optimizer step per batch (NumPy batches from
our reader), `logits(batch)` gives the MLM logits at the masked positions, (B, P, V) NumPy. The
recipes and where each default comes from are in `time_to_accuracy.py`'s docstring.
"""

import pathlib
import warnings

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

OFFICIAL_WARMUP_FRACTION = 3125 / 125_000  # pretrain_job's default warmup


def backbone_config(args, vocabulary_size: int) -> dict:
    return {
        "vocabulary_size": vocabulary_size,
        "num_layers": args.num_layers,
        "num_heads": args.num_heads,
        "embedding_dim": args.embedding_dim,
        "hidden_dim": args.hidden_dim,
        "intermediate_dim": args.intermediate_dim,
        "max_sequence_length": args.seq_length,
    }


class Peer:
    """One implementation: `train(batches)` runs the steps, `logits(batch)` (B, P, V) NumPy."""

    def __init__(self, train, logits):
        self.train, self.logits = train, logits


def ours_peer(args, init, policy: str) -> Peer:
    """`albert-keras pretrain`'s model and optimizer, holding `init`'s weights."""
    from albert_keras.models import AlbertBackbone, AlbertPretrainer
    from albert_keras.optimizers import Lamb, WarmupLinearDecay
    from albert_keras.training import strategy as strategies
    from albert_keras.training.precision import loss_scaled

    backbone = AlbertBackbone(**init.backbone.get_config() | {"dtype": policy})
    pretrainer = AlbertPretrainer(backbone, sentence_objective="sop")
    pretrainer.build()
    pretrainer.set_weights(init.get_weights())
    warmup = round(args.max_steps * OFFICIAL_WARMUP_FRACTION)
    schedule = WarmupLinearDecay(args.ours_learning_rate, warmup, args.max_steps)
    pretrainer.compile(
        optimizer=loss_scaled(Lamb(learning_rate=schedule), policy),
        jit_compile=strategies.resolve_jit_compile(
            args.ours_jit_compile, strategies.get_strategy("auto")
        ),
    )

    def train(batches):
        for batch in batches:
            pretrainer.train_on_batch(batch)

    def logits(batch):
        return np.asarray(pretrainer.predict_on_batch(batch)["mlm_logits"], np.float32)

    return Peer(train, logits)


def keras_hub_peer(args, init) -> Peer:
    """keras-hub's AlbertMaskedLM with `init`'s backbone and MLM head, its documented compile."""
    import keras
    import keras_hub

    from albert_keras.convert.keras_hub import backbone_to_keras_hub

    masked_lm = keras_hub.models.AlbertMaskedLM(
        backbone_to_keras_hub(init.backbone), preprocessor=None
    )
    # Both heads name their five own weights alike; the tied embedding is the backbone's.
    ours_head = {
        v.path.split("mlm_head/")[-1]: v for v in init.mlm_head.weights if "mlm_head/" in v.path
    }
    for variable in masked_lm.weights:
        name = variable.path.split("mlm_head/")[-1]
        if variable.path.startswith("mlm_head/") and name in ours_head:
            variable.assign(keras.ops.convert_to_numpy(ours_head.pop(name)))
    if ours_head:
        raise RuntimeError(f"keras-hub's MLM head lacks {sorted(ours_head)}")
    # keras-hub's MaskedLM trains no pooler (MLM only): Keras warns of it at every trace.
    warnings.filterwarnings("ignore", message="Gradients do not exist for variables")
    masked_lm.compile(
        optimizer=keras.optimizers.Adam(args.keras_hub_learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        weighted_metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )

    def inputs(batch):
        names = ("token_ids", "segment_ids", "padding_mask", "mask_positions")
        keys = (INPUT_IDS, SEGMENT_IDS, INPUT_MASK, MASKED_LM_POSITIONS)
        return {name: batch[key] for name, key in zip(names, keys)}

    def train(batches):
        for b in batches:
            masked_lm.train_on_batch(
                inputs(b), b[MASKED_LM_IDS], sample_weight=b[MASKED_LM_WEIGHTS]
            )

    return Peer(train, lambda b: np.asarray(masked_lm.predict_on_batch(inputs(b)), np.float32))


def hugging_face_peer(args, init, folder: pathlib.Path) -> Peer:
    """AlbertForPreTraining from `init`'s converted folder, trained as `Trainer` would."""
    import torch
    import transformers

    from albert_keras.convert import official_from_model, write_hf_folder

    write_hf_folder(*official_from_model(init), folder)
    transformers.utils.logging.disable_progress_bar()
    model = transformers.AlbertForPreTraining.from_pretrained(folder).train()
    try:  # Trainer's default optim on torch >= 2.8 is "adamw_torch_fused"
        optimizer = torch.optim.AdamW(
            model.parameters(), lr=args.hf_learning_rate, eps=1e-8, weight_decay=0.0, fused=True
        )
    except RuntimeError:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.hf_learning_rate, eps=1e-8)
    scheduler = transformers.get_linear_schedule_with_warmup(optimizer, 0, args.max_steps)

    def tensors(batch):
        return {
            "input_ids": torch.tensor(batch[INPUT_IDS], dtype=torch.long),  # HF's argument
            "attention_mask": torch.tensor(batch[INPUT_MASK], dtype=torch.long),
            "token_type_ids": torch.tensor(batch[SEGMENT_IDS], dtype=torch.long),
        }

    def train(batches):
        for batch in batches:
            # As DataCollatorForLanguageModeling: -100 everywhere but the masked positions.
            labels = np.full(batch[INPUT_IDS].shape, -100, np.int64)
            rows, cols = np.nonzero(batch[MASKED_LM_WEIGHTS])
            labels[rows, batch[MASKED_LM_POSITIONS][rows, cols]] = batch[MASKED_LM_IDS][rows, cols]
            order = torch.tensor(batch[SENTENCE_LABELS].reshape(-1), dtype=torch.long)
            loss = model(
                **tensors(batch), labels=torch.from_numpy(labels), sentence_order_label=order
            ).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)

    def logits(batch):
        model.eval()
        with torch.inference_mode():
            out = model(**tensors(batch)).prediction_logits.numpy()
        model.train()
        return np.take_along_axis(out, batch[MASKED_LM_POSITIONS][..., None], axis=1)

    return Peer(train, logits)


def build_peers(args, vocabulary_size: int, workdir: pathlib.Path) -> dict:
    """The peers to run, by name, from one seeded float32 init."""
    import keras

    from albert_keras.models import AlbertBackbone, AlbertPretrainer
    from albert_keras.training.precision import choose_precision

    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(args.seed)
    init = AlbertPretrainer(AlbertBackbone(**backbone_config(args, vocabulary_size)), "sop")
    init.build()
    default_policy, why = choose_precision("auto", None)
    print(f"--mixed_precision auto on this machine: {default_policy} ({why})")
    wanted, views = args.peers.split(","), args.precision.split(",")
    peers = {}
    if "ours" in wanted:
        policies = {default_policy} if "defaults" in views else set()
        policies |= {"float32"} if "float32" in views else set()
        for policy in sorted(policies, key=lambda p: p != default_policy):
            peers[f"ours {policy}"] = ours_peer(args, init, policy)
    if "keras-hub" in wanted:
        peers["keras-hub float32"] = keras_hub_peer(args, init)
    if "hf" in wanted:
        peers["hf float32"] = hugging_face_peer(args, init, workdir / "hf_init")
    return peers, default_policy
