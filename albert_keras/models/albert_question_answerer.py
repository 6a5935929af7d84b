"""AlbertQuestionAnswerer: SQuAD span prediction on the backbone's sequence output."""

import keras

from albert_keras.layers.answerability_span_head import AnswerabilitySpanHead
from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.validation import check_positive, check_rate
from albert_keras.models.albert_task import AlbertTask
from albert_keras.models.squad_span_loss import SquadSpanLoss
from albert_keras.models.unused_pooler import UnusedPooler
from albert_keras.preset_registry import get_preset_loader

HEADS = ("simple", "v2")
_BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertQuestionAnswerer(UnusedPooler, AlbertTask, keras.Model):
    """Extractive question answering (SQuAD) on an `AlbertBackbone`.

    Two heads, as the two official scripts:
    - `head="simple"` (`run_squad_v1.py`, and Hugging Face's `AlbertForQuestionAnswering`):
      one Dense(2) over the sequence output, `{"start_logits", "end_logits"}` (batch, time);
    - `head="v2"` (`run_squad_v2.py`): `AnswerabilitySpanHead`, start log-probs, end
      log-probs given the start (the gold start in training, a `start_n_top` x `end_n_top`
      beam when the inputs hold no `start_positions`) and an answerability logit
      `cls_logits`. Its inputs add `p_mask` (1 where no answer can be) and, in training data,
      the gold `start_positions`.

    Inputs: a dict with the backbone's `token_ids`, `segment_ids`, `padding_mask` (and `p_mask`,
    `start_positions` for v2), as `albert_keras.squad.squad_dataset` makes them. The heads
    run in float32.

    Args:
        backbone: `AlbertBackbone`. The encoder, fine-tuned with the head.
        head: str. `"simple"` or `"v2"`.
        start_n_top: int. v2: start pieces kept at inference (official 5).
        end_n_top: int. v2: end pieces per start at inference (official 5).
        dropout: float. v2: dropout before the answerability logit (official 0.1).
        preprocessor: `AlbertPreprocessor` or None. The vocabulary (and its sha256) and the
            sequence length the answerer was fine-tuned with: saved with it, so a loaded model
            answers questions on text (`albert_keras.squad.answer_questions`).
        doc_stride: int. Pieces between the starts of two windows of a long context, as
            fine-tuned (official 128): saved with the model, so answering text (`albert-keras
            predict`, `answer_questions`) cuts contexts as training did.
        max_query_length: int. Question pieces kept, as fine-tuned (official 64); saved too.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Example:
    >>> from albert_keras.models import AlbertBackbone
    >>> backbone = AlbertBackbone(vocabulary_size=100, num_layers=2, num_heads=2, embedding_dim=8,
    ...                           hidden_dim=16, intermediate_dim=32, max_sequence_length=32)
    >>> answerer = AlbertQuestionAnswerer(backbone)
    >>> answerer.compile()  # AdamWeightDecay 5e-5, the official span loss
    >>> inputs = {"token_ids": np.ones((4, 8), "int32"), "segment_ids": np.zeros((4, 8), "int32"),
    ...           "padding_mask": np.ones((4, 8), "int32")}
    >>> outputs = answerer(inputs)
    >>> tuple(outputs["start_logits"].shape), tuple(outputs["end_logits"].shape)
    ((4, 8), (4, 8))
    >>> AlbertQuestionAnswerer(backbone, doc_stride=64).get_config()["doc_stride"]
    64
    """

    nested_objects = ("backbone", "preprocessor")

    def __init__(
        self,
        backbone,
        head="simple",
        start_n_top=5,
        end_n_top=5,
        dropout=0.1,
        preprocessor=None,
        doc_stride=128,
        max_query_length=64,
        **kwargs,
    ):
        if head not in HEADS:
            raise ValueError(f"head={head!r}: choose one of {', '.join(HEADS)}")
        check_positive(
            start_n_top=start_n_top,
            end_n_top=end_n_top,
            doc_stride=doc_stride,
            max_query_length=max_query_length,
        )
        check_rate("dropout", dropout)
        super().__init__(**kwargs)
        hidden_dim = backbone.get_config()["hidden_dim"]

        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor
        self.span_head = None
        self.v2_head = None
        if head == "simple":
            self.span_head = keras.layers.Dense(
                2, kernel_initializer=albert_initializer(), dtype="float32", name="qa_outputs"
            )
        else:
            self.v2_head = AnswerabilitySpanHead(
                hidden_dim, start_n_top, end_n_top, dropout, name="answerability_span_head"
            )

        # === Config ===
        self.head = head
        self.start_n_top = start_n_top
        self.end_n_top = end_n_top
        self.dropout = dropout
        self.doc_stride = doc_stride
        self.max_query_length = max_query_length
        self.hidden_dim = hidden_dim
        self.build()

    @classmethod
    def from_preset(cls, preset: str, head: str = "simple", **kwargs):
        """A question answerer over a preset's backbone: released weights by name
        (`"albert_base_v2"`, a local release folder or tarball, a converted `.keras`), or a
        random backbone of an architecture (`"albert_base"`); the span head is new.

        Args:
            preset: str. Any name `AlbertBackbone.from_preset` takes.
            head: str. `"simple"` (SQuAD v1.1) or `"v2"` (SQuAD v2.0's answerability head).
            **kwargs: `backbone_kwargs` (backbone overrides) and the constructor's
                (`start_n_top`, `end_n_top`, `dropout`, `name`).

        Example:
        >>> answerer = AlbertQuestionAnswerer.from_preset(
        ...     "albert_base", head="v2", backbone_kwargs={"num_layers": 1})
        >>> answerer.head
        'v2'
        """
        return get_preset_loader(preset).task_from_preset(cls, preset, head=head, **kwargs)

    def _takes_text(self, x) -> bool:
        # A question needs windows over its context and its answer mapped back to characters,
        # which a batch-wise `preprocessor` map cannot do: text goes through answer_questions.
        if getattr(self, "preprocessor", None) is not None and super()._takes_text(x):
            raise ValueError(
                "AlbertQuestionAnswerer takes token ids; to answer questions on text use "
                "albert_keras.squad.answer_questions(model, questions, contexts)"
            )
        return False

    def build(self, input_shape=None):
        if self.span_head is not None:
            self.span_head.build((None, None, self.hidden_dim))
        else:
            self.v2_head.build((None, None, self.hidden_dim))
        self.built = True

    def call(self, inputs, training=False):
        sequence = self.backbone(
            {name: inputs[name] for name in _BACKBONE_INPUTS}, training=training
        )["sequence_output"]
        if self.span_head is not None:
            logits = self.span_head(keras.ops.cast(sequence, "float32"))
            return {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}
        # Gold starts in the inputs (training data, `fit` and `evaluate`): the training
        # outputs; none (prediction data): the beam.
        start_positions = inputs.get("start_positions")
        return self.v2_head(sequence, inputs["p_mask"], start_positions, training=training)

    def compile(self, optimizer="auto", loss="auto", metrics=None, **kwargs):
        """`keras.Model.compile` with the official defaults.

        Args:
            optimizer: an optimizer, or `"auto"`: `AdamWeightDecay` (no bias correction,
                weight decay 0.01 not on biases / LayerNorm, gradients clipped to norm 1),
                learning rate 5e-5 (simple head, official v1) or 3e-5 (v2 head).
            loss: a loss, or `"auto"`: `SquadSpanLoss` (the official loss of the head).
            metrics: metrics (none by default: SQuAD is scored on texts, after `fit`).
            **kwargs: passed to `keras.Model.compile`.
        """
        if loss == "auto":
            loss = SquadSpanLoss()
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        # The loss takes the whole output dict (its terms mix outputs), which Keras's
        # per-output loss mapping cannot express; other losses go the usual way.
        if isinstance(self.loss, SquadSpanLoss):
            total = self.loss(y, y_pred, sample_weight)
            for extra in self.losses:
                total = total + keras.ops.sum(extra)
            return total
        return super().compute_loss(x, y, y_pred, sample_weight, training=training)

    @property
    def default_learning_rate(self):
        # The official scripts' defaults: run_squad_v1 5e-5, run_squad_v2 3e-5.
        return 5e-5 if self.head == "simple" else 3e-5

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "head": self.head,
                "start_n_top": self.start_n_top,
                "end_n_top": self.end_n_top,
                "dropout": self.dropout,
                "doc_stride": self.doc_stride,
                "max_query_length": self.max_query_length,
            }
        )
        return config
