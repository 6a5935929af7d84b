"""`FinetuneSquadSettings`: every setting of `albert-keras finetune-squad`, each default written
once."""

from __future__ import annotations

import dataclasses

from albert_keras_settings.setting import (
    check_choices,
    check_integer,
    check_number,
    check_positive,
    paths_as_strings,
    setting,
)
from albert_keras_settings.shared_settings import (
    accept_old_text_path_setting,
    deterministic_setting,
    fine_tuning_spm_setting,
    mixed_precision_setting,
    overwrite_setting,
    strategy_setting,
)

# The official learning rates (release README); every other default is shared.
LEARNING_RATES = {"1.1": 5e-5, "2.0": 3e-5}
# The release README's features (max_seq_length, doc_stride, max_query_length), for a model
# trained at 384 pieces or more; a shorter model's scale with its length (`feature_lengths`).
OFFICIAL_FEATURES = (384, 128, 64)
SOURCES = ("json", "tfds")
HEADS = ("simple", "v2")
# Settings that may be given as `pathlib.Path` from Python; kept as `str` (what a flag gives).
PATHS = ("train_file", "predict_file", "tfds_data_dir", "init_from", "output_dir", "spm_model")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FinetuneSquadSettings:
    """The settings of one SQuAD fine-tuning run (`albert_keras.jobs.finetune_squad_job`).

    Made from keyword arguments or from `albert-keras finetune-squad`'s flags, which are
    generated from these fields (`albert_keras_settings.settings_flags`); checked when made, so a
    bad value fails before anything is read or written. Frozen: `dataclasses.replace` gives a
    changed copy. The defaults are the release README's: features 384 / 128 / 64 (or, for a
    model trained at a shorter length, that length with a stride and question scaled to it:
    `feature_lengths`), batch 48, 2 epochs, 10% warmup, n-best 20, answers of at most 30
    pieces.

    Args:
        version: `"1.1"` or `"2.0"`.
        train_file, predict_file: SQuAD JSON paths (`source="json"`); `train_file` may be None
            with `epochs=0` and no `max_steps` (predict only).
        init_from: the weights to start from (`--init_from`, or `--model` as before): a `.keras`
            path holding an `AlbertBackbone` or a model with a `.backbone` (an
            `AlbertQuestionAnswerer` keeps its trained head), or such a model in memory.
        output_dir: the run's folder: new, empty or an earlier `finetune-squad` run's.
        head: `"simple"` or `"v2"`; `None`: a saved `AlbertQuestionAnswerer`'s own head, else
            simple for 1.1 and v2 for 2.0.
        max_steps: the optimizer steps, as `finetune-glue`'s; given, it wins over `epochs`
            (which keeps its default, so the two cannot be told apart to be refused together).
        learning_rate: `None`: 5e-5 (1.1) or 3e-5 (2.0), `learning_rate_or_default()`.
        ...: one per field below; each field's help says what it does.

    Example:
    >>> s = FinetuneSquadSettings(version="2.0", train_file="train-v2.0.json",
    ...                           predict_file="dev-v2.0.json", init_from="albert.keras",
    ...                           output_dir="out/")
    >>> s.batch_size, s.epochs, s.learning_rate_or_default()
    (48, 2.0, 3e-05)
    >>> FinetuneSquadSettings(version="2.0", predict_file="dev-v2.0.json",
    ...                       init_from="albert.keras", output_dir="out/")
    Traceback (most recent call last):
    ValueError: --predict_file (and --train_file unless --epochs 0) are required
    """

    version: str = setting(help="the SQuAD version", choices=tuple(LEARNING_RATES))
    train_file: str | None = setting(None, "SQuAD JSON for training (train-v2.0.json)")
    predict_file: str | None = setting(None, "SQuAD JSON to predict (dev-v2.0.json)")
    source: str = setting(
        "json",
        "json: --train_file / --predict_file; tfds: tensorflow_datasets squad/v1.1 or "
        "squad/v2.0 (network on first use; --tfds_data_dir)",
        choices=SOURCES,
    )
    tfds_data_dir: str | None = setting(None, "tensorflow_datasets data folder")
    init_from: str = setting(
        help="start from these weights: a saved AlbertBackbone / AlbertPretrainer / any model "
        "with a .backbone (.keras); its backbone is fine-tuned"
    )
    output_dir: str = setting(
        help="the run's folder: model.keras, predictions.json, nbest_predictions.json, "
        "metrics.json (null_odds.json for 2.0)"
    )
    overwrite: bool = overwrite_setting("finetune-squad")
    spm_model: str | None = fine_tuning_spm_setting()
    accept_old_text_path: bool = accept_old_text_path_setting("a model")
    head: str | None = setting(
        None, "none: a fine-tuned model's own head, else simple (1.1), v2 (2.0)", choices=HEADS
    )
    max_seq_length: int | None = setting(
        None,
        "pieces per feature (question, context, [CLS], [SEP]s); none: the model's own (the "
        "length --init_from was trained at, else its positions), at most the official 384",
    )
    doc_stride: int | None = setting(
        None,
        "pieces between the starts of a long context's windows; none: a third of "
        "--max_seq_length, in 16s (128 at 384, 32 at 128)",
    )
    max_query_length: int | None = setting(
        None,
        "questions are cut to this many pieces; none: a sixth of --max_seq_length, in 16s "
        "(64 at 384, 16 at 128)",
    )
    batch_size: int = setting(48, "training batch")
    epochs: float = setting(
        2.0, "passes over the training features; 0: predict with the model as is"
    )
    max_steps: int | None = setting(
        None, "optimizer steps; wins over --epochs when given (none: --epochs decides)"
    )
    learning_rate: float | None = setting(None, "peak; none: 5e-5 (1.1), 3e-5 (2.0)")
    warmup_proportion: float = setting(0.1, "fraction of the steps with a linear warmup")
    n_best_size: int = setting(20, "candidate answers kept per question")
    max_answer_length: int = setting(30, "longest answer, in pieces")
    strategy: str = strategy_setting()
    deterministic: bool = deterministic_setting()
    seed: int = setting(12345, "seeds the head's initial weights, dropout and the shuffle")
    mixed_precision: str = mixed_precision_setting()
    strict: bool = setting(
        False,
        "refuse a training file with an answer outside its context or not at its answer_start "
        "(without it such questions are skipped, counted in one line, as the official script)",
    )

    def __post_init__(self):
        paths_as_strings(self, *PATHS)  # (a keras.Model given as init_from stays)
        check_choices(self)
        lengths = ("max_seq_length", "doc_stride", "max_query_length")
        check_positive(self, *(name for name in lengths if getattr(self, name) is not None))
        check_positive(
            self,
            "batch_size",
            "n_best_size",
            "max_answer_length",
        )
        if self.max_steps is not None:
            check_positive(self, "max_steps")
        check_number("epochs", self.epochs, at_least=0)
        check_number("warmup_proportion", self.warmup_proportion, at_least=0, at_most=1)
        check_number("learning_rate", self.learning_rate, above=0)
        check_integer("seed", self.seed)
        # (Unset lengths are checked once `feature_lengths` has filled them in.)
        if all(getattr(self, name) is not None for name in lengths):
            # The official window: [CLS] question [SEP] context [SEP]. A stride longer than the
            # context a window holds skips pieces between two windows: most of a long context unread.
            context_length = self.max_seq_length - self.max_query_length - 3
            if context_length < 1:
                raise ValueError(
                    f"--max_seq_length={self.max_seq_length} leaves no room for a context after a "
                    f"{self.max_query_length}-piece question (--max_query_length) and [CLS] [SEP] [SEP]"
                )
            if self.doc_stride > context_length:
                raise ValueError(
                    f"--doc_stride={self.doc_stride} is longer than a window's context "
                    f"({context_length} = --max_seq_length {self.max_seq_length} - "
                    f"--max_query_length {self.max_query_length} - 3): pieces between two windows "
                    "would never be read"
                )
        if self.source == "json" and (
            self.predict_file is None or (self.trains() and self.train_file is None)
        ):
            raise ValueError("--predict_file (and --train_file unless --epochs 0) are required")

    def feature_lengths(self, model_length: int | None) -> FinetuneSquadSettings:
        """These settings with `max_seq_length`, `doc_stride` and `max_query_length` given:
        each as set, else the model's length (at most the official 384) and a stride and
        question scaled to the length (a third and a sixth, in multiples of 16).

        Args:
            model_length: int or None. The length the model was trained at (None: unknown,
                the official 384).

        Example:
        >>> s = FinetuneSquadSettings(version="2.0", train_file="t.json",
        ...                           predict_file="d.json", init_from="m.keras", output_dir="o/")
        >>> [s.feature_lengths(n).doc_stride for n in (128, 384, 512, None)]
        [32, 128, 128, 128]
        >>> s.feature_lengths(128).max_query_length, s.feature_lengths(128).max_seq_length
        (16, 128)
        """
        length = self.max_seq_length or min(model_length or OFFICIAL_FEATURES[0],
                                            OFFICIAL_FEATURES[0])  # fmt: skip
        return dataclasses.replace(
            self,
            max_seq_length=length,
            doc_stride=self.doc_stride or _in_sixteens(length / 3),
            max_query_length=self.max_query_length or _in_sixteens(length / 6),
        )

    def trains(self) -> bool:
        """Whether the run fine-tunes (`max_steps` given, or `epochs` above 0) before predicting."""
        return self.max_steps is not None or self.epochs > 0

    def learning_rate_or_default(self) -> float:
        """`learning_rate`, or the official one for `version` where it is `None`."""
        if self.learning_rate is None:
            return LEARNING_RATES[self.version]
        return self.learning_rate


def _in_sixteens(pieces: float) -> int:
    """`pieces` rounded down to a multiple of 16 (the official 128 and 64 are), or down to a
    whole piece under 16."""
    return int(pieces) // 16 * 16 if pieces >= 16 else max(1, int(pieces))
