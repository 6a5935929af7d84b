"""`albert-keras finetune-tokens`: fine-tune a saved ALBERT to tag words (NER, POS) on CoNLL files.

The usual recipe (BERT's NER, Hugging Face's `run_ner.py`): an `AlbertTokenClassifier` whose
labels sit on each word's first piece, the tags discovered from the training file (`O` first,
then sorted; saved in the model), the official `AdamWeightDecay` under warmup + linear decay,
and the validation file scored at the end with CoNLL's entity-level precision / recall / F1
(`seqeval`) and word accuracy.

Outputs in `output_dir`: `model.keras` (the tagger with its preprocessor and tag names:
`predict` on strings answers word tags with offsets), `metrics.json`,
`validation_predictions.txt` (`WORD GOLD PREDICTED` a line, CoNLL's evaluation layout) and,
with `--test_file`, `test_predictions.txt` (`WORD PREDICTED`).
"""

from __future__ import annotations

from albert_keras.jobs.own_files_run import OwnFilesRun
from albert_keras.models import AlbertTokenClassifier
from albert_keras.preprocessing.word_pieces import encode_words
from albert_keras.tagging import read_conll, tag_ids, tag_names, tagging_metrics
from albert_keras.training.model_files import writing
from albert_keras_contracts import atomic_write
from albert_keras_settings.finetune_tokens_settings import FinetuneTokensSettings


def finetune_tokens(
    settings: FinetuneTokensSettings | None = None, /, *, verbose: str | int = 0, **overrides
) -> dict:
    """Fine-tunes a backbone to tag the words of CoNLL-style files; writes the model, metrics
    and predictions.

    Args:
        settings: `FinetuneTokensSettings` (every setting, written once there).
        verbose: 0 is silent; otherwise a progress line every ~10 s.
        **overrides: settings as keyword arguments, alone or over `settings`.

    Returns:
        dict: what `metrics.json` holds (`metrics`: precision, recall, f1, accuracy).

    Example:
    >>> rows = ["The O", "cat B-ANIMAL", "sat O", "", "A O", "dog B-ANIMAL", "ran O", ""]
    >>> _ = open("tags.txt", "w").write("\\n".join(rows))
    >>> metrics = finetune_tokens(train_file="tags.txt", validation_file="tags.txt",
    ...                           init_from="albert.keras", output_dir="ner/",
    ...                           max_seq_length=16, batch_size=2, max_steps=2)
    >>> metrics["labels"], sorted(metrics["metrics"])
    (['O', 'B-ANIMAL'], ['accuracy', 'f1', 'precision', 'recall'])
    """
    return _FinetuneTokens(settings, overrides, verbose).run()


class _FinetuneTokens(OwnFilesRun):
    command = "albert-keras finetune-tokens"
    settings_class = FinetuneTokensSettings

    def read_files(self) -> None:
        s = self.settings
        self.train = read_conll(s.train_file)
        self.validation = read_conll(s.validation_file)
        self.test = None if s.test_file is None else read_conll(s.test_file, tags_required=False)
        self.labels = tag_names(self.train)
        tag_ids(self.validation, self.labels)  # a tag the training file lacks: refused here

    def extra_arguments(self) -> dict:
        return {"labels": self.labels}

    def make_model(self, backbone, preprocessor):
        return AlbertTokenClassifier(
            backbone,
            num_classes=len(self.labels),
            dropout=self.settings.dropout,
            labels=self.labels,
            preprocessor=preprocessor,
        )

    def encode(self, model, examples):
        inputs, labels, _ = encode_words(
            model.preprocessor.tokenizer,
            examples.words,
            self.settings.max_seq_length,
            tag_ids(examples, self.labels),
        )
        return inputs, labels

    def score(self, folder, model) -> dict:
        batch = self.settings.batch_size
        predicted = model.tag_words(self.validation.words, batch)
        cut = sum(tag is None for row in predicted for tag in row)
        files = {"model": "model.keras", "validation_predictions": "validation_predictions.txt"}
        with writing(folder, files["validation_predictions"]) as path:
            _write_tags(path, self.validation.words, self.validation.tags, predicted)
        if self.test is not None:
            files["test_predictions"] = "test_predictions.txt"
            test_tags = model.tag_words(self.test.words, batch)
            with writing(folder, files["test_predictions"]) as path:
                _write_tags(path, self.test.words, None, test_tags)
        return {
            "task": "token_classification",
            "split": "validation",
            "num_examples": len(self.validation),
            "num_words": sum(len(row) for row in self.validation.words),
            # Words past --max_seq_length: not seen by the model, scored as "O".
            "words_cut_off": cut,
            "metrics": tagging_metrics(self.validation.tags, predicted),
            "labels": self.labels,
            "files": files,
        }


def _write_tags(path, words, gold, predicted) -> None:
    """CoNLL's layout: `WORD [GOLD] PREDICTED` a line, a blank line after each sentence."""
    lines = []
    for row, (sentence, tags) in enumerate(zip(words, predicted)):
        for index, (word, tag) in enumerate(zip(sentence, tags)):
            columns = [word] + ([gold[row][index]] if gold is not None else []) + [tag or "O"]
            lines.append(" ".join(columns))
        lines.append("")
    atomic_write.write_text(path, "\n".join(lines) + "\n")
