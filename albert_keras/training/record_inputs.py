"""`RecordInputs`: a pretraining-style job's records, checked before any model is built."""

import os

from albert_keras_contracts.text_path import check_text_path, recorded_text_path
from albert_keras_contracts.vocabulary_identity import check_same_vocabulary, describe
from albert_keras_contracts.writer_stats import read_writer_stats, stats_path
from pipelines import read_pretraining_records
from pipelines.masking_settings import MaskingSettings
from pipelines.record_files import (
    check_token_ids,
    count_records,
    list_record_files,
    record_lengths,
)


class RecordInputs:
    """The training and held-out pretraining records of a job, and their `tf.data` batches.

    The pretrain and distill jobs both start here: the globs are expanded (files beside the
    shards are left out, named), the first record is checked to have every feature, every
    training record is counted (a corrupt or truncated shard fails now, named), and the
    batches come from `pipelines.read_pretraining_records`, a pure function of (seed, step),
    so a resumed run reads exactly the batches a run never stopped would have read.

    Args:
        records: str. Glob of training shards (`gs://` works).
        eval_records: str or `None`. Glob of held-out shards.
        max_seq_length: int. If given, the records must have it; default: the first record's.
        max_predictions_per_seq: int. Likewise for the masked-LM slots.

    Example:
    >>> inputs = RecordInputs("records/*.tfrecord", eval_records="records/*.tfrecord")
    >>> inputs.max_seq_length, inputs.max_predictions_per_seq
    (32, 5)
    >>> inputs.num_examples == inputs.num_eval_examples == count_records(inputs.files)
    True
    >>> batch = next(iter(inputs.train_data(4, seed=1)))
    >>> tuple(batch["input_ids"].shape), tuple(batch["masked_lm_positions"].shape)
    ((4, 32), (4, 5))
    >>> heldout, steps = inputs.eval_data(4, eval_steps=2)
    >>> steps
    2
    """

    def __init__(
        self,
        records: str,
        eval_records: str | None = None,
        *,
        max_seq_length: int | None = None,
        max_predictions_per_seq: int | None = None,
    ):
        self.records, self.eval_records = records, eval_records
        self.files = list_record_files(records, "--records")
        self.eval_files = list_record_files(eval_records, "--eval_records") if eval_records else []
        self.max_seq_length, self.max_predictions_per_seq = record_lengths(
            self.files[0], max_seq_length, max_predictions_per_seq
        )
        self.num_examples = count_records(self.files, "--records")
        self.num_eval_examples = count_records(self.eval_files, "--eval_records")
        self.eval_steps = 0  # set by `eval_data`
        self.vocabulary = None  # set by `check_token_ids`
        self.text_path = None  # likewise: the records' stats.json's (None: no stats)

    def description(self) -> dict:
        """The globs, held-out steps, vocabulary (`{"file", "sha256", "pieces"}` of the
        `spm_model` given to `check_token_ids`, or None) and the records' text path
        (`albert_keras_contracts.text_path`), as a run's summary records them."""
        return {
            "records": self.records,
            "eval_records": self.eval_records,
            "eval_steps": self.eval_steps,
            "vocabulary": self.vocabulary,
            "text_path": self.text_path,
        }

    def absolute_files(self) -> list[str]:
        """The training files as absolute paths (URLs unchanged), for a run's resume key."""
        return [path if "://" in path else os.path.abspath(path) for path in self.files]

    def check_token_ids(
        self,
        vocabulary_size: int,
        source: str,
        spm_model: str | None = None,
        accept_old_text_path: bool = False,
    ) -> None:
        """Refuses records made with another vocabulary than the model's, or by an older text
        path (unless `accept_old_text_path`), in one line.

        Where the writer's `stats.json` sits beside the records, `spm_model` must be the
        vocabulary it records (same sha256 and pieces) and `vocabulary_size` at least its
        pieces (`albert_keras_contracts.vocabulary_identity`); in any case no id may be negative or at or
        above `vocabulary_size`.

        Args:
            vocabulary_size: int. The model's vocabulary size.
            source: str. Where it came from (e.g. `"--spm_model out/spm.model"`).
            spm_model: str or None. The vocabulary copied beside the model.
            accept_old_text_path: bool. Train on records of an older text path as they are
                (`--accept_old_text_path`); the run records the oldest one read.
        """
        self.vocabulary = describe(spm_model)
        found = []
        name = f"--spm_model {spm_model}"
        for flag, files in (("--records", self.files), ("--eval_records", self.eval_files)):
            for folder in sorted({os.path.dirname(path) for path in files}):
                stats = read_writer_stats(folder, flag)
                if stats is not None:
                    check_same_vocabulary(
                        stats,
                        stats_path(folder),
                        vocabulary=self.vocabulary,
                        vocabulary_name=name,
                        model_vocabulary_size=vocabulary_size,
                        model_name=source,
                    )
                    found.append(recorded_text_path(stats))
                    check_text_path(found[-1], stats_path(folder), accept_old_text_path)
            if files:
                check_token_ids(files, vocabulary_size, flag, source)
        self.text_path = min(found) if found else None  # "albert-official-1" < "-2"

    def train_data(
        self,
        batch_size: int,
        *,
        seed: int,
        start_step: int = 0,
        dynamic_masking: bool = False,
        vocabulary_size: int | None = None,
    ):
        """The shuffled, repeated training batches from batch `start_step` on."""
        return read_pretraining_records(
            self.files,
            batch_size,
            max_seq_length=self.max_seq_length,
            max_predictions_per_seq=self.max_predictions_per_seq,
            seed=seed,
            start_step=start_step,
            num_examples=self.num_examples,
            dynamic_masking=MaskingSettings(vocabulary_size=vocabulary_size)
            if dynamic_masking
            else False,
        )

    def eval_data(self, batch_size: int, eval_steps: int):
        """`(dataset, steps)` of the held-out records, or `(None, 0)` without them.

        `steps` is `eval_steps` full batches at most (0: every full batch). The dataset
        repeats, so every batch is full and none is the empty end-of-data step Keras runs on an
        exhausted dataset (which would count in per-batch means).
        """
        if eval_steps < 0:
            raise ValueError(f"--eval_steps={eval_steps} must be >= 0")
        if not self.eval_files:
            self.eval_steps = 0
            return None, 0
        examples = self.num_eval_examples
        if examples < batch_size:
            raise ValueError(
                f"--eval_records: {examples} examples, fewer than a batch of {batch_size}"
            )
        full_batches = examples // batch_size
        steps = min(eval_steps, full_batches) if eval_steps else full_batches
        self.eval_steps = steps
        dataset = read_pretraining_records(
            self.eval_files,
            batch_size,
            max_seq_length=self.max_seq_length,
            max_predictions_per_seq=self.max_predictions_per_seq,
            shuffle=False,
            repeat=True,
        )
        return dataset, steps
