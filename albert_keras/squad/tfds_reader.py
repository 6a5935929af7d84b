"""Reads SQuAD from `tensorflow_datasets` (`squad/v1.1`, `squad/v2.0`; downloaded on first use)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from albert_keras.squad.squad_examples import SquadExamples, squad_examples_from_articles

_SPLITS = ("train", "validation")


def read_squad_tfds(
    version: str,
    split: str,
    *,
    is_training: bool,
    data_dir: str | None = None,
    first_answer_only: bool = False,
) -> SquadExamples:
    """Reads one split of tfds's `squad/v1.1` or `squad/v2.0` (train or validation).

    Args:
        version: str. `"1.1"` or `"2.0"`.
        split: str. `"train"` or `"validation"`.
        is_training: bool. See `read_squad_json`.
        data_dir: str or None. tfds's data folder (`~/tensorflow_datasets` when None); a folder
            already holding the prepared dataset is read without network.
        first_answer_only: bool. See `read_squad_json`.

    Returns:
        SquadExamples, the same as `read_squad_json` on the source JSON file.

    Example (not run as a doctest: TensorFlow Datasets downloads SQuAD, and tests have no network):
    >>> dev = read_squad_tfds("2.0", "validation", is_training=False)   # doctest: +SKIP
    >>> len(dev)                                                       # doctest: +SKIP
    11873
    """
    import tensorflow_datasets as tfds  # imported here: slow, and only this path needs it

    if version not in ("1.1", "2.0") or split not in _SPLITS:
        raise ValueError(f"version={version!r}, split={split!r}: choose 1.1/2.0, train/validation")
    name = f"squad/v{version}"
    rows = tfds.as_numpy(tfds.load(name, split=split, data_dir=data_dir, shuffle_files=False))
    return squad_examples_from_tfds(
        rows,
        version=version,
        is_training=is_training,
        source=f"tfds:{name}[{split}]",
        first_answer_only=first_answer_only,
    )


def squad_examples_from_tfds(
    rows: Iterable[Mapping],
    *,
    version: str,
    is_training: bool,
    source: str = "tfds",
    first_answer_only: bool = False,
) -> SquadExamples:
    """Turns tfds SQuAD rows (`id`, `context`, `question`, `answers: {text, answer_start}`,
    and `is_impossible` for v2.0; strings as bytes) into `SquadExamples`, through the same
    checks as the JSON reader. Rows with the same context are grouped into one paragraph."""
    paragraphs = {}
    for row in rows:
        context = _text(row["context"])
        answers = row["answers"]
        qa = {
            "id": _text(row["id"]),
            "question": _text(row["question"]),
            "answers": [
                {"text": _text(text), "answer_start": int(start)}
                for text, start in zip(answers["text"], answers["answer_start"])
            ],
        }
        if "is_impossible" in row:
            qa["is_impossible"] = bool(row["is_impossible"])
        paragraphs.setdefault(context, []).append(qa)
    articles = [{"paragraphs": [{"context": c, "qas": q} for c, q in paragraphs.items()]}]
    return squad_examples_from_articles(
        articles,
        is_training=is_training,
        source=source,
        version=version,
        first_answer_only=first_answer_only,
    )


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
