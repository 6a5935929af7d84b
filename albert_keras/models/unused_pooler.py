"""UnusedPooler: the backbone's pooler outside the trainable set, for heads that never read it."""


class UnusedPooler:
    """A mixin for task models whose head reads the sequence output only (span and token heads).

    Their pooler gets no gradient: Keras warned "Gradients do not exist for variables
    ['pooler/kernel', 'pooler/bias']" in every run and kept optimizer slots for it. The official
    run_squad's optimizer skips it likewise (its gradient is None), and Hugging Face's
    `AlbertForQuestionAnswering` / `AlbertForTokenClassification` have none; an
    `AlbertPretrainer` without a sentence head (MLM only) reads it no more. Listed here as
    non-trainable, it keeps its loaded values; the backbone is not changed (its pooler stays
    trainable for a classifier built on it).
    """

    def _pooler_unused(self) -> bool:
        """Whether the head never reads the pooled output (always, unless a model says)."""
        return True

    def _unused_weight_ids(self) -> set:
        if not self._pooler_unused():
            return set()
        pooler = getattr(getattr(self, "backbone", None), "pooler", None)
        return {id(weight) for weight in pooler.weights} if pooler is not None else set()

    @property
    def trainable_weights(self):
        unused = self._unused_weight_ids()
        return [w for w in super().trainable_weights if id(w) not in unused]

    @property
    def trainable_variables(self):
        unused = self._unused_weight_ids()
        return [v for v in super().trainable_variables if id(v) not in unused]

    @property
    def non_trainable_weights(self):
        unused = self._unused_weight_ids()
        moved = [w for w in super().trainable_weights if id(w) in unused]
        return super().non_trainable_weights + moved

    @property
    def non_trainable_variables(self):
        unused = self._unused_weight_ids()
        moved = [v for v in super().trainable_variables if id(v) in unused]
        return super().non_trainable_variables + moved
