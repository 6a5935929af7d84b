"""The Adam with weight decay that the official ALBERT and BERT fine-tuning use, and the update
`Lamb` builds on: Adam moments without bias correction, weight decay inside the update,
exclusions by variable path, and clipping of the global batch's gradient."""

import re
from collections.abc import Sequence

import keras
from keras import ops

# The official `optimization.create_optimizer` list, matched against each variable's *path*
# (e.g. "encoder/group_0_inner_0_ffn/layer_norm/gamma"): Keras 3 variable names are leaves
# ("gamma", "kernel"), so the layer name that says "layer_norm" is only in the path.
OFFICIAL_EXCLUSIONS = ("LayerNorm", "layer_norm", "bias")


# Keras's public extension points for an optimizer are `build` and `update_step`. Beside them
# this class overrides or calls `keras.optimizers.Optimizer`'s underscored hooks
# (`_clip_gradients`, `_all_reduce_sum_gradients`, `_apply_weight_decay`, `_use_weight_decay`,
# `_get_variable_index`), the hooks Keras's own optimizers and backends use: Keras has no public
# way to clip after the cross-replica sum or to decay inside the update. On purpose, and pinned
# by tests/optimizers (official references, one device vs several); check them on a Keras upgrade.
@keras.saving.register_keras_serializable(package="albert_keras")
class AdamWeightDecay(keras.optimizers.Optimizer):
    """The official `AdamWeightDecayOptimizer` (`optimization.py` of ALBERT and BERT).

    Per variable `w` with gradient `g` (after global-norm clipping at 1.0, as the official
    `create_optimizer`):

        m = β1 m + (1 - β1) g                 v = β2 v + (1 - β2) g²
        update = m / (sqrt(v) + ε) + weight_decay * w          (no bias correction)
        w = w - learning_rate * scale_update(update)

    `scale_update` is the identity here; `Lamb`, a subclass, multiplies by its trust ratio (same
    moments, exclusions, clipping and state). `keras.optimizers.AdamW` differs: it corrects the
    moments' bias (larger steps over the first ~1,000 updates here) and decays the weights
    before the step rather than inside the update. Variables whose path matches a pattern in
    `exclude_from_weight_decay` (by default LayerNorm weights and biases) are not decayed.

    Clipping acts on the gradient of the whole global batch, so a run gives the same updates on
    one device or several. (Keras's `global_clipnorm` under `tf.distribute` clips each replica's
    share before the cross-replica sum, and the official TPU code clipped each shard's gradient
    before averaging: both depend on the replica count once clipping is active.)

    Args:
        learning_rate: float or `keras.optimizers.schedules.LearningRateSchedule`. The official
            GLUE runs use warmup then linear decay from 1e-5 to 5e-5 (`WarmupLinearDecay`).
        weight_decay: float. Decay rate added to the update.
        beta_1: float. Decay of the first-moment estimate.
        beta_2: float. Decay of the second-moment estimate.
        epsilon: float. Added to `sqrt(v)`; the official value is 1e-6.
        exclude_from_weight_decay: list of str. Regular expressions searched in each variable's
            path; a match gets no weight decay.
        global_clipnorm: float or `None`. Clip all gradients to this global norm (official 1.0).
        **kwargs: passed to `keras.optimizers.Optimizer` (`name`, `gradient_accumulation_steps`,
            `loss_scale_factor`, ...).

    Example:
    >>> from albert_keras.optimizers import WarmupLinearDecay
    >>> optimizer = AdamWeightDecay(WarmupLinearDecay(2e-5, 100, 1000))
    >>> optimizer.name, optimizer.weight_decay
    ('adam_weight_decay', 0.01)
    """

    def __init__(
        self,
        learning_rate: float | keras.optimizers.schedules.LearningRateSchedule = 5e-5,
        weight_decay: float = 0.01,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-6,
        exclude_from_weight_decay: Sequence[str] | None = OFFICIAL_EXCLUSIONS,
        global_clipnorm: float | None = 1.0,
        name: str = "adam_weight_decay",
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            global_clipnorm=global_clipnorm,
            name=name,
            **kwargs,
        )
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        # Private names: `exclude_from_weight_decay` is also a method of the base optimizer.
        self._decay_exclusions = list(exclude_from_weight_decay or ())

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"]
        )
        # Decided once per variable, in Python, from the Keras variable's path: inside
        # `update_step` TF hands us bare tf.Variables (per replica), which have no path.
        self._decays = tuple(
            bool(self.weight_decay)
            and self._use_weight_decay(variable)
            and not matches_path(variable, self._decay_exclusions)
            for variable in var_list
        )
        # No trust ratio here; `Lamb` decides it per variable in its own `build`.
        self._adapts = (False,) * len(var_list)

    def _clip_gradients(self, grads):
        if self.global_clipnorm and keras.backend.backend() == "tensorflow":
            return grads  # clipped after the cross-replica sum: `_all_reduce_sum_gradients`
        return super()._clip_gradients(grads)

    def _all_reduce_sum_gradients(self, grads_and_vars):
        # TensorFlow only: the hook where Keras sums the replicas' gradients (an identity outside
        # `tf.distribute`), just before `update_step`. On JAX the gradient is already the global
        # batch's, and `_clip_gradients` clips it.
        grads_and_vars = list(super()._all_reduce_sum_gradients(grads_and_vars))
        if not self.global_clipnorm:
            return grads_and_vars
        grads = [None if g is None else _dense(g) for g, _ in grads_and_vars]
        norm = ops.sqrt(sum(ops.sum(ops.square(g)) for g in grads if g is not None))
        # As tf.clip_by_global_norm: scale by clip / max(norm, clip).
        scale = self.global_clipnorm / ops.maximum(norm, self.global_clipnorm)
        return [
            (None if g is None else g * ops.cast(scale, g.dtype), v)
            for g, (_, v) in zip(grads, grads_and_vars)
        ]

    def _apply_weight_decay(self, variables):
        # The base optimizer decays weights before the step (decoupled, AdamW-style); the
        # official optimizers add the decay to the update instead, inside `update_step`.
        return

    def scale_update(self, index: int, variable, update):
        """The update of variable `index` as applied (times the learning rate): unchanged here,
        `Lamb` multiplies it by its trust ratio."""
        return update

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        dtype = variable.dtype
        gradient = ops.cast(_dense(gradient), dtype)
        learning_rate = ops.cast(learning_rate, dtype)
        m, v = self._momentums[index], self._velocities[index]

        next_m = self.beta_1 * m + (1.0 - self.beta_1) * gradient
        next_v = self.beta_2 * v + (1.0 - self.beta_2) * ops.square(gradient)
        self.assign(m, next_m)
        self.assign(v, next_v)
        # No bias correction, as the official code.
        update = next_m / (ops.sqrt(next_v) + self.epsilon)
        if self._decays[index]:
            update = update + ops.cast(self.weight_decay, dtype) * variable
        self.assign_sub(variable, learning_rate * self.scale_update(index, variable, update))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            {
                "beta_1": self.beta_1,
                "beta_2": self.beta_2,
                "epsilon": self.epsilon,
                "exclude_from_weight_decay": list(self._decay_exclusions),
            }
        )
        return config


def matches_path(variable, patterns: Sequence[str]) -> bool:
    """Whether a regular expression in `patterns` is found in the variable's path."""
    path = getattr(variable, "path", variable.name)
    return any(re.search(pattern, path) for pattern in patterns)


def _dense(gradient):
    # TensorFlow hands embedding gradients over as tf.IndexedSlices; the norms need them dense
    # (JAX gradients always are).
    if hasattr(gradient, "indices") and hasattr(gradient, "dense_shape"):
        import tensorflow as tf

        return tf.convert_to_tensor(gradient)
    return gradient
