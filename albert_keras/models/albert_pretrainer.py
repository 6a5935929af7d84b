"""AlbertPretrainer: masked LM + sentence-order (or next-sentence) prediction over a backbone."""

import keras
from keras import ops

from albert_keras.layers.activations import gelu_approximate
from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.sparse_cross_entropy import sparse_cross_entropy
from albert_keras.layers.tied_masked_lm_head import TiedMaskedLMHead
from albert_keras.models.albert_task import AlbertTask
from albert_keras.models.unused_pooler import UnusedPooler
from albert_keras.preset_registry import get_preset_loader
from albert_keras_contracts.catalogue import SENTENCE_OBJECTIVES as OBJECTIVES
from albert_keras_contracts.record_format import (
    INPUT_IDS,
    INPUT_MASK,
    MASKED_LM_IDS,
    MASKED_LM_POSITIONS,
    MASKED_LM_WEIGHTS,
    MODEL_INPUTS,
    SEGMENT_IDS,
    SENTENCE_LABELS,
)

# The catalogue's objectives; the model spells "none" as None.
SENTENCE_OBJECTIVES = tuple(None if name == "none" else name for name in OBJECTIVES)
# The backbone's input names -> the pretraining records' feature names (docs/design.md), as the
# record format defines them; the distiller and the demo call `backbone_inputs`.
RECORD_FEATURES = MODEL_INPUTS


def backbone_inputs(features: dict) -> dict:
    """A batch of record features (docs/design.md) -> the backbone's int32 inputs.

    Example:
    >>> import numpy as np
    >>> record = {"input_ids": np.array([[2, 9, 3]]), "input_mask": np.array([[1, 1, 1]]),
    ...           "segment_ids": np.array([[0, 0, 0]]), "next_sentence_labels": np.array([[0]])}
    >>> sorted(backbone_inputs(record))
    ['padding_mask', 'segment_ids', 'token_ids']
    """
    return {name: ops.cast(features[feature], "int32") for name, feature in RECORD_FEATURES.items()}


def masked_lm_hits(logits, ids):
    """1.0 where the label's logit is its row's maximum, else 0.0: (batch, P) from (batch, P, V).

    One reduction over the logits, where `ops.argmax` on TensorFlow makes five full passes (its
    -0.0 handling). A tie with the maximum counts as a hit.

    Example:
    >>> logits = np.array([[[0.1, 2.0, 0.3], [1.0, 0.0, 0.5]]], "float32")
    >>> keras.ops.convert_to_numpy(masked_lm_hits(logits, np.array([[1, 2]])))
    array([[1., 0.]], dtype=float32)
    """
    ids = ops.cast(ids, "int32")
    label_logits = ops.take_along_axis(logits, ids[..., None], axis=-1)[..., 0]
    return ops.cast(label_logits >= ops.max(logits, axis=-1), "float32")


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertPretrainer(UnusedPooler, AlbertTask, keras.Model):
    """ALBERT's pretraining model: the backbone, an MLM head and a sentence head.

    It takes ONE dict per batch with the TFRecord feature names of docs/design.md (`input_ids`,
    `input_mask`, `segment_ids`, `masked_lm_positions`, `masked_lm_ids`, `masked_lm_weights`,
    `next_sentence_labels`; any other key, e.g. `token_boundary`, is ignored; int64 is fine), so
    `pretrainer.fit(dataset_of_dicts)` needs no `y`: the labels are read from the batch in
    `compute_loss`, which works on the TensorFlow and JAX backends alike.

    - MLM head: on the hidden states at `masked_lm_positions` only (P positions instead of
      the whole sequence: much cheaper), Dense H -> E with GELU, LayerNorm (eps 1e-12), and
      the output tied to the backbone's token embedding (E -> V) plus a bias.
    - Sparse last layer: the losses read the last layer at those P positions and at [CLS] (the
      pooler's input) only, so its block computes just those rows, its queries attending to
      every row's keys and values (`AlbertBackbone.outputs_at`). Outputs and gradients are
      those of the full computation up to float round-off (tests/models), for fewer FLOPs in
      the last layer.
    - Sentence head: Dense(2) on the pooled output; `"sop"` (sentence order, the paper's
      section 4.6) and `"nsp"` (BERT's next sentence) differ in the data only.
    - Loss: `sum(w * ce) / (sum(w) + 1e-5)` over the masked positions, weights
      `masked_lm_weights`, as the official code, plus the mean sentence cross-entropy.
      `fit`/`evaluate` report `loss`, `mlm_loss`, `mlm_accuracy`, `sentence_loss` and
      `sentence_accuracy`: means over all the masked positions (MLM) or examples (sentence)
      seen, so `evaluate` over batches of any sizes equals one batch holding the whole set;
      `loss` is `mlm_loss + sentence_loss`. Logits are float32 under mixed precision.

    With a `preprocessor` (keras-hub's Task pattern, as the classifier's), the vocabulary and
    sequence length travel in the saved model, and `predict` also takes strings holding
    `[MASK]` (a fill-mask: `mlm_logits` at each text's masks, see `masked_text_inputs`).

    Args:
        backbone: `AlbertBackbone`. The encoder (its token embedding is the MLM output layer).
        sentence_objective: `"sop"`, `"nsp"` or `None` (MLM only: no sentence head).
        preprocessor: `AlbertPreprocessor` or None. The vocabulary the model was trained on.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Call returns a dict: `mlm_logits` (batch, P, V) and, unless the objective is `None`,
    `sentence_logits` (batch, 2).

    Example:
    >>> import pipelines
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone(vocabulary_size=50, num_layers=2, num_heads=2, embedding_dim=8,
    ...                           hidden_dim=16, intermediate_dim=32, max_sequence_length=32)
    >>> pretrainer = AlbertPretrainer(backbone)
    >>> pretrainer.compile()  # AdamWeightDecay, learning rate 1e-4
    >>> records = pipelines.read_pretraining_records("records/*.tfrecord", 8, max_seq_length=32,
    ...                                              max_predictions_per_seq=5)
    >>> outputs = pretrainer(next(iter(records)))
    >>> tuple(outputs["mlm_logits"].shape), tuple(outputs["sentence_logits"].shape)
    ((8, 5, 50), (8, 2))
    """

    default_learning_rate = 1e-4
    nested_objects = ("backbone", "preprocessor")

    def __init__(self, backbone, sentence_objective="sop", preprocessor=None, **kwargs):
        if sentence_objective not in SENTENCE_OBJECTIVES:
            raise ValueError(
                f"sentence_objective={sentence_objective!r} is not one of {SENTENCE_OBJECTIVES}"
            )
        # The model's own policy is float32, unlike keras-hub's tasks, which take the backbone's:
        # a mixed policy here would open an autocast scope around the MLM head, which
        # (autocast=False, as keras-hub's MaskedLMHead) then adds its float32 bias to bfloat16
        # logits, which TensorFlow refuses. Not the global policy either: that is not saved, and
        # a copy loaded under another one computed other MLM logits. The backbone and heads
        # keep their policies.
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        self.backbone = backbone
        self.sentence_objective = sentence_objective
        self.preprocessor = preprocessor

        # === Layers ===
        self.mlm_head = TiedMaskedLMHead(
            token_embedding=backbone.token_embedding,
            intermediate_activation=gelu_approximate,
            layer_norm_epsilon=1e-12,
            kernel_initializer=albert_initializer(),
            dtype=backbone.dtype_policy,
            name="mlm_head",
        )
        self.sentence_head = None
        if sentence_objective is not None:
            self.sentence_head = keras.layers.Dense(
                2, kernel_initializer=albert_initializer(), dtype="float32", name="sentence_head"
            )

        # === Metrics ===
        # Means over the real masked positions (weighted by `masked_lm_weights`) and over the
        # examples, not over steps: `evaluate` on a dataset whose batches differ in size or
        # in masked counts gives the numbers of one batch holding it all. The metrics' states
        # are sums, so replicas add up under `tf.distribute` too.
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        # A weighted Mean of per-position hits (see `compute_metrics`).
        self.mlm_accuracy = keras.metrics.Mean(name="mlm_accuracy")
        if sentence_objective is not None:
            self.sentence_loss_tracker = keras.metrics.Mean(name="sentence_loss")
            self.sentence_accuracy = keras.metrics.SparseCategoricalAccuracy(
                name="sentence_accuracy"
            )
        # The heads' shapes are known now, so build at once: `summary()` and `count_params()`
        # work before the first batch, as they do for the functional backbone.
        self.build()

    def _pooler_unused(self) -> bool:
        # MLM only: the pooler gets no gradient (Keras warned "Gradients do not exist for
        # variables ['pooler/kernel', ...]" on every step of the study's no-SOP cells).
        return getattr(self, "sentence_head", None) is None

    @classmethod
    def from_preset(cls, preset: str, sentence_objective: str | None = "sop", **kwargs):
        """A pretrainer from released weights (backbone and heads) or an architecture name.

        Args:
            preset: str. As `AlbertBackbone.from_preset`. An architecture name gives random
                weights; weights with heads (official releases, `hf://`, our `.keras`)
                keep them; keras-hub's, which have none, get fresh heads.
            sentence_objective: `"sop"`, `"nsp"` or `None`; the released heads are SOP's.
            **kwargs: passed to `AlbertBackbone.from_preset` for an architecture name.

        Example:
        >>> AlbertPretrainer.from_preset("albert_base").sentence_objective
        'sop'
        """
        from albert_keras.models.albert_backbone import AlbertBackbone

        if preset in AlbertBackbone.presets:  # an architecture name: random weights
            return cls(AlbertBackbone.from_preset(preset, **kwargs), sentence_objective)
        if kwargs:
            raise ValueError(f"{preset}: released weights take no backbone overrides {kwargs}")
        pretrainer = get_preset_loader(preset).load_pretrainer(preset)
        if not isinstance(pretrainer, cls):  # a backbone or a classifier: fresh heads
            pretrainer = cls(getattr(pretrainer, "backbone", pretrainer), sentence_objective)
        elif sentence_objective != pretrainer.sentence_objective:
            # The MLM head is kept; the sentence head is the other objective's, fresh.
            switched = cls(pretrainer.backbone, sentence_objective)
            switched.mlm_head.set_weights(pretrainer.mlm_head.get_weights())
            pretrainer = switched
        return pretrainer

    def build(self, input_shape=None):
        if (
            self.built
        ):  # built in __init__; a later build() (e.g. before loading weights) is a no-op
            return
        # The heads' shapes follow from the (already built) backbone, not from the batch.
        self.mlm_head.build((None, None, self.backbone.hidden_dim), (None, None))
        if self.sentence_head is not None:
            self.sentence_head.build((None, self.backbone.hidden_dim))
        self.built = True

    def call(self, inputs, training=None):
        # The losses read the last layer's hidden states at the masked positions and at [CLS]
        # only, so the last block computes just those rows (`AlbertBackbone.outputs_at`); the
        # MLM head gets them already gathered.
        positions = ops.cast(inputs[MASKED_LM_POSITIONS], "int32")
        outputs = self.backbone.outputs_at(backbone_inputs(inputs), positions, training=training)
        mlm_logits = self.mlm_head(outputs["sequence_output"])
        results = {"mlm_logits": ops.cast(mlm_logits, "float32")}
        if self.sentence_head is not None:
            results["sentence_logits"] = self.sentence_head(outputs["pooled_output"])
        return results

    def compile(self, optimizer="auto", loss=None, metrics=None, **kwargs):
        """`keras.Model.compile` with a default optimizer; the loss and metrics are built in.

        Args:
            optimizer: a `keras.optimizers.Optimizer`, or `"auto"`: the official
                `AdamWeightDecay` (no bias correction), learning rate 1e-4, weight decay 0.01
                (not on biases / LayerNorm), gradients clipped to norm 1.
            loss, metrics: must stay `None`: the losses and metrics come from the batch dict.
            **kwargs: passed to `keras.Model.compile` (e.g. `jit_compile`).
        """
        if loss is not None or metrics is not None:
            raise ValueError(
                "AlbertPretrainer computes its own loss and metrics from the batch dict; "
                "call compile() without loss= and metrics="
            )
        super().compile(optimizer=optimizer, **kwargs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        mlm_weights = ops.cast(x[MASKED_LM_WEIGHTS], "float32")
        per_position = sparse_cross_entropy(x[MASKED_LM_IDS], y_pred["mlm_logits"])
        # The official code's normalizer: the 1e-5 keeps a batch with no predictions finite.
        mlm_loss = ops.sum(per_position * mlm_weights) / (ops.sum(mlm_weights) + 1e-5)
        self.mlm_loss_tracker.update_state(per_position, sample_weight=mlm_weights)
        loss = mlm_loss
        if self.sentence_head is not None:
            per_example = keras.losses.sparse_categorical_crossentropy(
                self._sentence_labels(x), y_pred["sentence_logits"], from_logits=True
            )
            self.sentence_loss_tracker.update_state(per_example)
            loss = loss + ops.mean(per_example)
        return self._total_loss(loss)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        self.mlm_accuracy.update_state(
            masked_lm_hits(y_pred["mlm_logits"], x[MASKED_LM_IDS]),
            sample_weight=ops.cast(x[MASKED_LM_WEIGHTS], "float32"),
        )
        if self.sentence_head is not None:
            self.sentence_accuracy.update_state(self._sentence_labels(x), y_pred["sentence_logits"])
        return self.get_metrics_result()

    def get_metrics_result(self):
        results = super().get_metrics_result()
        if "loss" in results:
            # Keras's own `loss` is a mean over steps weighted by batch size, but the MLM loss is
            # a mean over masked positions: report the sum of the weighted parts instead. (Extra
            # losses, `add_loss()` or regularizers, none by default, are trained on, not shown.)
            results["loss"] = results["mlm_loss"]
            if self.sentence_head is not None:
                results["loss"] = results["loss"] + results["sentence_loss"]
        return results

    def predict(self, x, batch_size=None, **kwargs):
        """`keras.Model.predict`; with a `preprocessor`, also on strings holding `[MASK]`."""
        if self._takes_text(x):
            x = self.masked_text_inputs(x)
        return super().predict(x, batch_size=batch_size, **kwargs)

    def masked_text_inputs(self, texts) -> dict:
        """Strings with `[MASK]` where a piece is to be predicted -> the batch dict the model
        takes: `masked_lm_positions` at the masks, in order, padded with weight 0.

        SentencePiece never makes `[MASK]` (a control piece) from text, so each text is cut at
        the literal `[MASK]`, its parts tokenized, and the mask id put between them.

        Args:
            texts: a list or array of strings (needs the `preprocessor`).
        """
        import numpy as np
        import tensorflow as tf

        tokenizer = self.preprocessor.tokenizer
        mask_id = tokenizer.mask_token_id
        rows = []
        for text in np.asarray(texts, dtype=object).reshape(-1):
            text = text.decode() if isinstance(text, bytes) else str(text)
            parts = [tokenizer(part).numpy().tolist() for part in text.split("[MASK]")]
            rows.append([*parts[0], *(i for part in parts[1:] for i in (mask_id, *part))])
        packed = self.preprocessor.pack(tf.ragged.constant(rows, dtype="int32", ragged_rank=1))
        token_ids = packed["token_ids"].numpy()
        is_mask = token_ids == mask_id
        width = max(1, int(is_mask.sum(axis=1).max()))
        positions = np.zeros((len(rows), width), "int32")
        weights = np.zeros((len(rows), width), "float32")
        for row, masks in enumerate(is_mask):
            found = np.flatnonzero(masks)
            positions[row, : len(found)], weights[row, : len(found)] = found, 1.0
        return {
            INPUT_IDS: token_ids,
            INPUT_MASK: packed["padding_mask"].numpy(),
            SEGMENT_IDS: packed["segment_ids"].numpy(),
            MASKED_LM_POSITIONS: positions,
            MASKED_LM_WEIGHTS: weights,
        }

    @staticmethod
    def _sentence_labels(x):
        # The records store the label with shape (batch, 1).
        return ops.reshape(ops.cast(x[SENTENCE_LABELS], "int32"), (-1,))

    def get_config(self):
        config = super().get_config()
        config.update({"sentence_objective": self.sentence_objective})
        return config
