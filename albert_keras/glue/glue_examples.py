"""One split of a GLUE task, held column-wise (ready for `tf.data.Dataset.from_tensor_slices`)."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class GlueExamples:
    """The rows of one split of one GLUE task.

    Args:
        task: str. GLUE's task name, e.g. `"RTE"`.
        split: str. `"train"`, `"dev"`, `"dev_matched"`, `"test"`, ...
        source: str. Where the rows came from (a file path, or `"tfds:glue/rte[validation]"`).
        index: list of str. Each example's id, as GLUE's submission files want it.
        text_a: list of str. The first (or only) sentence.
        text_b: list of str, or None for single-sentence tasks.
        labels: NumPy array or None. int32 class ids (positions in `label_names`), float32
            scores for STS-B, `None` for test splits (GLUE publishes no test labels).
        label_names: tuple of str, or None (regression).

    Example:
    >>> from albert_keras.glue import read_glue_tsv
    >>> dev = read_glue_tsv("glue_data", "RTE", "dev")
    >>> len(dev), dev.label_counts()
    (277, {'entailment': 146, 'not_entailment': 131})
    """

    task: str
    split: str
    source: str
    index: list[str]
    text_a: list[str]
    text_b: list[str] | None
    labels: np.ndarray | None
    label_names: tuple[str, ...] | None

    def __post_init__(self):
        lengths = {len(self.index), len(self.text_a)}
        lengths |= set() if self.text_b is None else {len(self.text_b)}
        lengths |= set() if self.labels is None else {len(self.labels)}
        if len(lengths) != 1:
            raise ValueError(f"{self.source}: columns have different lengths {sorted(lengths)}")

    def __len__(self) -> int:
        return len(self.text_a)

    @property
    def has_labels(self) -> bool:
        return self.labels is not None

    def label_counts(self) -> dict[str, int]:
        """How many examples carry each label (classification splits with labels only)."""
        if self.labels is None or self.label_names is None:
            raise ValueError(f"{self.source}: no class labels to count")
        counts = collections.Counter(int(i) for i in self.labels)
        return {name: counts.get(i, 0) for i, name in enumerate(self.label_names)}
