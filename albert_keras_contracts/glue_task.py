"""What one GLUE task is: its files and columns, labels, metrics and fine-tuning defaults.

Pure Python (NumPy imported where predictions are turned into labels), so that the catalogue
(`albert_keras_contracts.catalogue`), the settings and the command line know the tasks without
loading TensorFlow.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True)
class TsvLayout:
    """Where the fields of one GLUE TSV file are: header names, or 0-based columns.

    A file with a header names its columns: a field given as a name (`"sentence2"`) is found
    by name, and a file whose header lacks it is refused (a missing column would otherwise
    shift the label into a text field). A field given as an int is a column number (-1 the
    last), for header-less files (CoLA train/dev) and hand-made layouts.

    Args:
        file: str. The file name inside the task's folder, e.g. `"dev_matched.tsv"`.
        text_a: str or int. Column of the first sentence.
        text_b: str, int or None. Column of the second sentence; `None` for one-sentence tasks.
        label: str, int or None. Column of the label; `None` in test files (no labels).
        index: str, int or None. Column of the example id GLUE's submission wants; `None`: the
            row number.
        num_columns: int or None. Fields per row for a file without a header (CoLA train/dev);
            `None` means the file has a header row, whose width every row must have.
    """

    file: str
    text_a: int | str
    text_b: int | str | None
    label: int | str | None
    index: int | str | None = None
    num_columns: int | None = None

    @property
    def has_header(self) -> bool:
        return self.num_columns is None


@dataclasses.dataclass(frozen=True)
class GlueTask:
    """One GLUE task: layout of its files, label list, metrics and official fine-tuning defaults.

    Args:
        name: str. GLUE's spelling, e.g. `"SST-2"`.
        directory: str. The task's folder inside a GLUE download (`GLUE_DIR/SST-2/...`).
        splits: mapping of split name (`"train"`, `"dev"`, `"dev_matched"`, `"test"`, ...) to
            its `TsvLayout`.
        labels: tuple of str, or None. The label strings in the official code's order (the
            class id is the position); `None` for the regression task STS-B.
        metrics: tuple of str. GLUE's metrics for the task, main metric first.
        dev_splits: tuple of str. Splits evaluated (the first drives early stopping).
        test_splits: mapping of test split to its submission file stem (`"MNLI-m"`).
        learning_rate, batch_size, train_steps, warmup_steps, eval_every: the official
            `run_glue.sh` values (`eval_every` is its `save_checkpoints_steps`: the official code
            evaluates every saved checkpoint). `None` for the prediction-only AX.
        max_seq_length: int. 512, as the official script.
        tfds_name: str or None. The `tensorflow_datasets` config, e.g. `"glue/sst2"`.
        tfds_text: tuple of str. The tfds feature names of text_a (and text_b).
        tfds_labels: tuple of str or None. tfds's class names, in tfds's id order.
        diagnostic: str or None. A prediction-only task run with this task's model (AX for MNLI).
        score_range: (float, float) or None. A regression task's gold scores lie in it (STS-B:
            [0, 5]); the readers refuse others, the submission clips predictions to it.

    Example:
    >>> from albert_keras_contracts.catalogue import get_glue_task
    >>> task = get_glue_task("sst2")
    >>> task.name, task.num_classes, task.main_metric
    ('SST-2', 2, 'accuracy')
    """

    name: str
    directory: str
    splits: Mapping[str, TsvLayout]
    labels: tuple[str, ...] | None
    metrics: tuple[str, ...]
    dev_splits: tuple[str, ...]
    test_splits: Mapping[str, str]
    learning_rate: float | None = None
    batch_size: int | None = None
    train_steps: int | None = None
    warmup_steps: int | None = None
    eval_every: int | None = None
    max_seq_length: int = 512
    tfds_name: str | None = None
    tfds_text: tuple[str, ...] = ()
    tfds_labels: tuple[str, ...] | None = None
    diagnostic: str | None = None
    score_range: tuple[float, float] | None = None

    @property
    def is_regression(self) -> bool:
        return self.labels is None

    @property
    def num_classes(self) -> int:
        """The classifier's output width: 1 for regression (STS-B)."""
        return 1 if self.labels is None else len(self.labels)

    @property
    def is_pair(self) -> bool:
        return next(iter(self.splits.values())).text_b is not None

    @property
    def main_metric(self) -> str:
        return self.metrics[0]

    @property
    def trainable(self) -> bool:
        return "train" in self.splits

    def predictions(self, outputs):
        """Model outputs (B, num_classes) -> class ids (argmax) or scores (regression)."""
        import numpy as np

        outputs = np.asarray(outputs)
        if self.is_regression:
            return outputs.reshape(-1).astype("float32")
        return outputs.argmax(axis=-1).astype("int32")

    def submission_labels(self, predictions) -> list[str]:
        """Predictions as the strings GLUE's server expects in the `prediction` column."""
        import numpy as np

        if self.is_regression:
            # GLUE's STS-B scores lie in [0, 5]; a regression head can step outside.
            if self.score_range is not None:
                predictions = np.clip(predictions, *self.score_range)
            return [f"{value:.3f}" for value in predictions]
        return [self.labels[int(i)] for i in predictions]
