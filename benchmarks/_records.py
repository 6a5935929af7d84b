"""Small pretraining records for the benchmarks that train: the books, or the demo's corpus.

`small_records` writes a SentencePiece vocabulary and train / held-out TFRecords under a folder
and returns `(train glob, held-out glob, vocabulary size)`. Two sources:

- `"books"`: the Gutenberg books in `../shared/data/corpus/gutenberg`, *The Adventures of
  Sherlock Holmes* (1661.txt) held out, an uncased 8,000-piece vocabulary trained on the other
  five, 20 paragraphs per document: the study's setting (docs/precision/README.md), on which
  the tiny ALBERT reaches held-out MLM 0.12-0.15 within a few thousand steps.
- `"docstrings"`: the demo's embedded corpus (docstrings of the installed packages), for a
  checkout without `../shared`.

A second call with the same settings and folder reuses the records it wrote (`settings.json`);
with other settings it stops, naming the folder, and removes nothing.
"""

import json
import pathlib

BOOKS = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus" / "gutenberg"
HELDOUT_BOOK = "1661.txt"


def default_source() -> str:
    """`"books"` when ../shared/data has them, else `"docstrings"`."""
    return "books" if (BOOKS / HELDOUT_BOOK).exists() else "docstrings"


def small_records(
    workdir: pathlib.Path,
    source: str,
    *,
    seq_length: int,
    max_predictions: int,
    seed: int,
    megabytes: float | None = None,
    vocab_size: int | None = None,
    dupe_factor: int | None = None,
) -> tuple[str, str, int]:
    """Writes (or reuses) records under `workdir`; returns (train glob, held-out glob, V).

    Args:
        workdir: pathlib.Path. Gets `vocab/`, `records/{train,heldout}/` and `settings.json`.
        source: str. `"books"` or `"docstrings"`.
        seq_length, max_predictions, seed: the writer's `max_seq_length`,
            `max_predictions_per_seq` and `seed`.
        megabytes: float or None. Text read per book or per docstring source (books: None
            reads each whole book; docstrings: default 0.3).
        vocab_size: int or None. Default 8000 (books), 2000 (docstrings).
        dupe_factor: int or None. Default 1 (books), 2 (docstrings).
    """
    from pipelines.tokenization import spm_vocabulary_size

    books = source == "books"
    settings = {
        "source": source,
        "seq_length": seq_length,
        "max_predictions": max_predictions,
        "seed": seed,
        "megabytes": megabytes if books else (megabytes or 0.3),
        "vocab_size": vocab_size or (8000 if books else 2000),
        "dupe_factor": dupe_factor or (1 if books else 2),
    }
    stamp = workdir / "settings.json"
    train = str(workdir / "records/train/*.tfrecord")
    heldout = str(workdir / "records/heldout/*.tfrecord")
    if stamp.exists() and json.loads(stamp.read_text()) == settings:
        return train, heldout, spm_vocabulary_size(str(workdir / "vocab/spm.model"))
    taken = [name for name in ("vocab", "records", "corpus") if (workdir / name).exists()]
    if taken:  # never removed: the folder may be a user's
        raise SystemExit(
            f"{workdir}: {', '.join(taken)} already there, not written with these settings "
            "(settings.json); pass another --workdir"
        )
    data = (_book_records if books else _docstring_records)(workdir, settings)
    stamp.write_text(json.dumps(settings))
    return data["train"], data["heldout"], spm_vocabulary_size(data["spm_model"])


def _docstring_records(workdir: pathlib.Path, s: dict) -> dict:
    from albert_keras.demo.demo_data import prepare_corpus, prepare_records

    corpus = prepare_corpus(workdir, None, None, megabytes=s["megabytes"])
    return prepare_records(
        workdir,
        corpus,
        vocab_size=s["vocab_size"],
        max_seq_length=s["seq_length"],
        max_predictions_per_seq=s["max_predictions"],
        dupe_factor=s["dupe_factor"],
        input_format="text",
        paragraphs_per_document=1,
        seed=s["seed"],
    )


def _book_records(workdir: pathlib.Path, s: dict) -> dict:
    from pipelines.pretraining_data import write_pretraining_data
    from pipelines.train_vocab import train_vocab

    books = sorted(BOOKS.glob("[0-9]*.txt"))
    splits = {
        "train": [_head(b, workdir, s["megabytes"]) for b in books if b.name != HELDOUT_BOOK],
        "heldout": [_head(BOOKS / HELDOUT_BOOK, workdir, s["megabytes"])],
    }
    spm_prefix = str(workdir / "vocab" / "spm")
    train_vocab(
        [str(p) for p in splits["train"]],
        spm_prefix,
        vocab_size=s["vocab_size"],
        lower_case=True,  # as the study's books8k vocabulary
        seed=s["seed"],
        hard_vocab_limit=False,
    )
    for split, dupe, shards in (("train", s["dupe_factor"], 2), ("heldout", 1, 1)):
        write_pretraining_data(
            input=[str(p) for p in splits[split]],
            spm_model=spm_prefix + ".model",
            output_dir=str(workdir / "records" / split),
            max_seq_length=s["seq_length"],
            max_predictions_per_seq=s["max_predictions"],
            dupe_factor=dupe,
            num_shards=shards,
            seed=s["seed"],
            progress=False,
        )
    return {
        "spm_model": spm_prefix + ".model",
        "train": str(workdir / "records/train/*.tfrecord"),
        "heldout": str(workdir / "records/heldout/*.tfrecord"),
    }


def _head(book: pathlib.Path, workdir: pathlib.Path, megabytes: float | None) -> pathlib.Path:
    """The book itself, or a copy of its first `megabytes` cut at a paragraph break."""
    if megabytes is None:
        return book
    text = book.read_text(encoding="utf-8")[: int(megabytes * 1e6)]
    cut = text.rfind("\n\n")
    copy = workdir / "corpus" / book.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(text[: cut if cut > 0 else len(text)], encoding="utf-8")
    return copy
