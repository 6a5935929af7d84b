"""AlbertDistiller: a student AlbertPretrainer trained against a frozen teacher (DistilBERT)."""

import keras
from keras import ops

from albert_keras.distill.distillation_losses import (
    cosine_distance,
    soft_target_cross_entropy,
    weighted_mean,
)
from albert_keras.layers.factorized_embedding import albert_initializer
from albert_keras.layers.sparse_cross_entropy import sparse_cross_entropy
from albert_keras.models import AlbertPretrainer
from albert_keras.models.albert_pretrainer import RECORD_FEATURES, backbone_inputs, masked_lm_hits
from albert_keras.models.albert_task import AlbertTask
from albert_keras.models.unused_pooler import UnusedPooler
from albert_keras_contracts.record_format import (
    MASKED_LM_IDS,
    MASKED_LM_POSITIONS,
    MASKED_LM_WEIGHTS,
)
from albert_keras_settings.distill_settings import check_distillation_loss


@keras.saving.register_keras_serializable(package="albert_keras")
class AlbertDistiller(UnusedPooler, AlbertTask, keras.Model):
    """DistilBERT's triple loss (Sanh et al., 2019) for ALBERT, on the records' masked positions.

    Both models read the same batch dict (the pretraining records' features, as
    `AlbertPretrainer`). At the masked positions `masked_lm_positions` (weights
    `masked_lm_weights`) the loss is

        soft_target_weight * T^2 * CE(softmax(teacher / T), softmax(student / T))
      + mlm_weight * CE(labels, student)
      + cosine_weight * (1 - cos(P h_student, h_teacher))

    with the last layer's hidden states h, and P a learned H_s -> H_t Dense when the student is
    narrower (TinyBERT's W_h; identity otherwise). DistilBERT's defaults: 5 / 2 / 1, T = 2. The
    teacher is frozen (`trainable = False`, called with `training=False`): its weights never
    change and no gradient reaches them. `fit` / `evaluate` report `loss`, `soft_target_loss`,
    `mlm_loss`, `cosine_loss` (means over the weighted positions), `mlm_accuracy` (the
    student's) and `teacher_mlm_accuracy`. The student's sentence head, if any, is not trained.

    Args:
        teacher: `AlbertPretrainer`. Its backbone and MLM head give the soft targets.
        student: `AlbertPretrainer` with the teacher's vocabulary; any depth and width.
        temperature: float. T, softens both distributions in the soft-target term.
        soft_target_weight, mlm_weight, cosine_weight: float. The terms' weights (>= 0).
        cosine_positions: `"masked"` (the masked positions, as the other terms) or `"tokens"`
            (every real token, as DistilBERT).
        **kwargs: passed to `keras.Model`.

    `compile()` without an optimizer makes `AlbertTask`'s (AdamWeightDecay, learning rate 1e-4,
    as `AlbertPretrainer`'s).

    Example:
    >>> import pipelines
    >>> from albert_keras.models import AlbertBackbone
    >>> teacher = keras.saving.load_model("albert.keras")  # an AlbertPretrainer, 2 layers
    >>> config = {**teacher.backbone.get_config(), "num_layers": 1}
    >>> student = AlbertPretrainer(AlbertBackbone.from_config(config), None)
    >>> distiller = AlbertDistiller(teacher, student)
    >>> distiller.compile(optimizer=keras.optimizers.Adam(1e-4))
    >>> records = pipelines.read_pretraining_records("records/*.tfrecord", 8, max_seq_length=32,
    ...                                              max_predictions_per_seq=5)
    >>> history = distiller.fit(records, steps_per_epoch=2, verbose=0)
    >>> sorted(history.history)
    ['cosine_loss', 'loss', 'mlm_accuracy', 'mlm_loss', 'soft_target_loss', 'teacher_mlm_accuracy']
    """

    nested_objects = ("teacher", "student")

    def _unused_weight_ids(self) -> set:
        """The student's unused pooler (an MLM-only student never reads it): not trained."""
        student = getattr(self, "student", None)
        return student._unused_weight_ids() if isinstance(student, UnusedPooler) else set()

    def __init__(
        self,
        teacher,
        student,
        temperature=2.0,
        soft_target_weight=5.0,
        mlm_weight=2.0,
        cosine_weight=1.0,
        cosine_positions="masked",
        **kwargs,
    ):
        for role, model in (("teacher", teacher), ("student", student)):
            if not isinstance(model, AlbertPretrainer):
                raise ValueError(  # noqa: TRY004 (the CLI reports ValueErrors in one line)
                    f"the {role} must be an AlbertPretrainer (backbone + MLM head), "
                    f"got {type(model).__name__}"
                )
        if teacher.backbone.vocabulary_size != student.backbone.vocabulary_size:
            raise ValueError(
                f"the student's vocabulary_size={student.backbone.vocabulary_size} differs from "
                f"the teacher's {teacher.backbone.vocabulary_size}: soft targets need the same one"
            )
        check_distillation_loss(
            temperature, soft_target_weight, mlm_weight, cosine_weight, cosine_positions
        )
        # float32, as AlbertPretrainer's own policy: it calls the pretrainers' backbones and
        # heads itself, so its policy (not saved) must not follow the global one.
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        self.teacher = teacher
        self.teacher.trainable = False
        self.student = student
        self.temperature = temperature
        self.soft_target_weight = soft_target_weight
        self.mlm_weight = mlm_weight
        self.cosine_weight = cosine_weight
        self.cosine_positions = cosine_positions

        # === Layers ===
        self.projection = None
        if student.backbone.hidden_dim != teacher.backbone.hidden_dim:
            self.projection = keras.layers.Dense(
                teacher.backbone.hidden_dim,
                kernel_initializer=albert_initializer(),
                dtype=student.backbone.dtype_policy,
                name="hidden_projection",
            )

        # === Metrics ===
        # Means over the weighted positions (sums in their states), as AlbertPretrainer's.
        self.soft_target_tracker = keras.metrics.Mean(name="soft_target_loss")
        self.mlm_loss_tracker = keras.metrics.Mean(name="mlm_loss")
        self.cosine_tracker = keras.metrics.Mean(name="cosine_loss")
        self.mlm_accuracy = keras.metrics.Mean(name="mlm_accuracy")
        self.teacher_mlm_accuracy = keras.metrics.Mean(name="teacher_mlm_accuracy")
        self.build()

    def build(self, input_shape=None):
        if self.built:
            return
        if self.projection is not None:
            self.projection.build((None, None, self.student.backbone.hidden_dim))
        self.built = True

    def call(self, inputs, training=None):
        features = backbone_inputs(inputs)
        positions = ops.cast(inputs[MASKED_LM_POSITIONS], "int32")
        # With the cosine term on the masked rows, every term reads only those: both backbones'
        # last blocks compute just them (`AlbertBackbone.outputs_at`, as the pretrainer's), and
        # the heads take them as they are. Otherwise the heads gather from every row.
        masked = self.cosine_positions == "masked"

        def hidden_states(pretrainer, training):
            if masked:
                rows = pretrainer.backbone.outputs_at(features, positions, training=training)
                return rows["sequence_output"]
            return pretrainer.backbone(features, training=training)["sequence_output"]

        student = hidden_states(self.student, training)
        teacher = ops.stop_gradient(hidden_states(self.teacher, False))
        head_positions = None if masked else positions
        outputs = {
            "student_logits": self.student.mlm_head(student, mask_positions=head_positions),
            "teacher_logits": self.teacher.mlm_head(teacher, mask_positions=head_positions),
        }
        if self.projection is not None:
            student = self.projection(student)
        outputs["student_hidden"], outputs["teacher_hidden"] = student, teacher
        outputs["teacher_logits"] = ops.stop_gradient(outputs["teacher_logits"])
        return {name: ops.cast(value, "float32") for name, value in outputs.items()}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        weights = ops.cast(x[MASKED_LM_WEIGHTS], "float32")
        soft = soft_target_cross_entropy(
            y_pred["student_logits"], y_pred["teacher_logits"], self.temperature
        )
        mlm = sparse_cross_entropy(x[MASKED_LM_IDS], y_pred["student_logits"])
        cosine = cosine_distance(y_pred["student_hidden"], y_pred["teacher_hidden"])
        cosine_weights = (
            weights
            if self.cosine_positions == "masked"
            else ops.cast(x[RECORD_FEATURES["padding_mask"]], "float32")
        )
        self.soft_target_tracker.update_state(soft, sample_weight=weights)
        self.mlm_loss_tracker.update_state(mlm, sample_weight=weights)
        self.cosine_tracker.update_state(cosine, sample_weight=cosine_weights)
        loss = (
            self.soft_target_weight * weighted_mean(soft, weights)
            + self.mlm_weight * weighted_mean(mlm, weights)
            + self.cosine_weight * weighted_mean(cosine, cosine_weights)
        )
        return self._total_loss(loss)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        weights = ops.cast(x[MASKED_LM_WEIGHTS], "float32")
        for tracker, logits in (
            (self.mlm_accuracy, y_pred["student_logits"]),
            (self.teacher_mlm_accuracy, y_pred["teacher_logits"]),
        ):
            tracker.update_state(masked_lm_hits(logits, x[MASKED_LM_IDS]), sample_weight=weights)
        return self.get_metrics_result()

    def get_metrics_result(self):
        results = super().get_metrics_result()
        if "loss" in results:
            # The weighted sum of the terms' means over positions (Keras's own `loss` is a mean
            # over steps).
            results["loss"] = (
                self.soft_target_weight * results["soft_target_loss"]
                + self.mlm_weight * results["mlm_loss"]
                + self.cosine_weight * results["cosine_loss"]
            )
        return results

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "temperature": self.temperature,
                "soft_target_weight": self.soft_target_weight,
                "mlm_weight": self.mlm_weight,
                "cosine_weight": self.cosine_weight,
                "cosine_positions": self.cosine_positions,
            }
        )
        return config
