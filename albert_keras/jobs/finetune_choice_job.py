"""`albert-keras finetune-choice`: fine-tune a saved ALBERT on multiple choice (RACE, SWAG).

An `AlbertMultipleChoice` (Hugging Face's `AlbertForMultipleChoice`, the official `run_race`'s
head) reads every option with its context as one packed pair and picks by cross-entropy over
the options; the official `AdamWeightDecay` under warmup + linear decay (1e-5, the official
RACE rate, by default); accuracy on the validation file at the end.

Outputs in `output_dir`: `model.keras` (with its preprocessor: `predict((contexts, options))`
answers on text), `metrics.json`, `validation_predictions.jsonl` (`{"id", "choice", "label",
"option"}` a line) and, with `--test_file`, `test_predictions.jsonl`.
"""

from __future__ import annotations

import json

import numpy as np

from albert_keras.jobs.own_files_run import OwnFilesRun
from albert_keras.models import AlbertMultipleChoice
from albert_keras.multiple_choice import read_choices
from albert_keras.training.model_files import writing
from albert_keras_contracts import atomic_write
from albert_keras_settings.finetune_choice_settings import FinetuneChoiceSettings


def finetune_choice(
    settings: FinetuneChoiceSettings | None = None, /, *, verbose: str | int = 0, **overrides
) -> dict:
    """Fine-tunes a backbone on multiple-choice files; writes the model, metrics, predictions.

    Args:
        settings: `FinetuneChoiceSettings` (every setting, written once there).
        verbose: 0 is silent; otherwise a progress line every ~10 s.
        **overrides: settings as keyword arguments, alone or over `settings`.

    Returns:
        dict: what `metrics.json` holds (`metrics`: accuracy).

    Example:
    >>> rows = ["sent1,sent2,ending0,ending1,label", "The cat,It,sat.,flew.,0",
    ...         "A dog,It,ran.,swam.,0"]
    >>> _ = open("swag.csv", "w").write("\\n".join(rows) + "\\n")
    >>> metrics = finetune_choice(train_file="swag.csv", validation_file="swag.csv",
    ...                           init_from="albert.keras", output_dir="swag/",
    ...                           max_seq_length=16, batch_size=2, max_steps=2)
    >>> metrics["num_examples"], metrics["num_options"], sorted(metrics["metrics"])
    (2, 2, ['accuracy'])
    """
    return _FinetuneChoice(settings, overrides, verbose).run()


class _FinetuneChoice(OwnFilesRun):
    command = "albert-keras finetune-choice"
    settings_class = FinetuneChoiceSettings

    def read_files(self) -> None:
        s = self.settings
        self.train = read_choices(s.train_file, s.format)
        self.validation = read_choices(s.validation_file, s.format)
        self.test = None if s.test_file is None else read_choices(s.test_file, s.format)
        for examples in (self.train, self.validation):
            if examples.labels is None or None in examples.labels:
                missing = examples.where[0 if examples.labels is None else
                                         examples.labels.index(None)]  # fmt: skip
                raise ValueError(f"{missing}: no answer (label); training and validation need one")

    def extra_arguments(self) -> dict:
        return {"format": self.settings.format}

    def make_model(self, backbone, preprocessor):
        return AlbertMultipleChoice(
            backbone, dropout=self.settings.dropout, preprocessor=preprocessor
        )

    def encode(self, model, examples):
        return model.encode(examples.contexts, examples.pairs), np.asarray(examples.labels, "int32")

    def _predict(self, model, examples) -> np.ndarray:
        inputs = model.encode(examples.contexts, examples.pairs)
        return model.predict(inputs, batch_size=self.settings.batch_size, verbose=0)

    def score(self, folder, model) -> dict:
        chosen = np.argmax(self._predict(model, self.validation), axis=-1)
        labels = np.asarray(self.validation.labels)
        files = {"model": "model.keras", "validation_predictions": "validation_predictions.jsonl"}
        with writing(folder, files["validation_predictions"]) as path:
            _write_choices(path, self.validation, chosen)
        if self.test is not None:
            files["test_predictions"] = "test_predictions.jsonl"
            test_chosen = np.argmax(self._predict(model, self.test), axis=-1)
            with writing(folder, files["test_predictions"]) as path:
                _write_choices(path, self.test, test_chosen)
        return {
            "task": "multiple_choice",
            "split": "validation",
            "num_examples": len(self.validation),
            "num_options": self.validation.num_options,
            "metrics": {"accuracy": float(np.mean(chosen == labels))},
            "files": files,
        }


def _write_choices(path, examples, chosen) -> None:
    lines = []
    for index, choice in enumerate(chosen):
        row = {"id": examples.ids[index], "choice": int(choice)}
        if examples.labels is not None:
            row["label"] = examples.labels[index]
        row["option"] = examples.options[index][int(choice)]
        lines.append(json.dumps(row, ensure_ascii=False))
    atomic_write.write_text(path, "\n".join(lines) + "\n")
