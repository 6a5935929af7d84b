"""The demo's first three stages: text -> SentencePiece vocabulary -> pretraining records."""

import pathlib

from albert_keras.demo.docstring_corpus import extract_docstring_corpus
from pipelines.pretraining_data import write_pretraining_data
from pipelines.train_vocab import train_vocab


def prepare_corpus(
    out: pathlib.Path, corpus: str | None, heldout: str | None, megabytes: float
) -> dict:
    """The text to train on and to hold out: the user's globs, or the embedded corpus.

    Args:
        out: pathlib.Path. The demo's output folder (the embedded corpus goes to `corpus/`).
        corpus, heldout: str or None. Globs of the user's text; both or neither.
        megabytes: float. Text read per source of the embedded corpus.

    Returns:
        dict: `train` and `heldout` (file lists or globs) and `summary` (what was read).

    Example:
    >>> corpus = prepare_corpus(pathlib.Path("demo_output"), "corpus/a.txt", "corpus/b.txt", 1.0)
    >>> corpus["train"], corpus["heldout"]
    ('corpus/a.txt', 'corpus/b.txt')
    """
    if (corpus is None) != (heldout is None):
        raise ValueError("--corpus and --heldout go together (held-out text for evaluation)")
    if corpus is not None:
        return {
            "train": corpus,
            "heldout": heldout,
            "summary": {"train": corpus, "heldout": heldout},
        }
    # A line per source: reading the installed packages' modules is the demo's longest silence.
    extracted = extract_docstring_corpus(
        out / "corpus", max_megabytes_per_source=megabytes, log=lambda line: print(line, flush=True)
    )
    return {
        "train": extracted["train_files"],
        "heldout": extracted["heldout_files"],
        "summary": {"source": "installed Python docstrings and reference", **extracted["sources"]},
    }


def prepare_records(
    out: pathlib.Path,
    corpus: dict,
    *,
    vocab_size: int,
    max_seq_length: int,
    max_predictions_per_seq: int,
    dupe_factor: int,
    input_format: str,
    paragraphs_per_document: int,
    seed: int,
) -> dict:
    """Trains the vocabulary on `corpus["train"]` and writes train and held-out records.

    Args:
        out: pathlib.Path. Gets `vocab/spm.model` and `records/{train,heldout}/`.
        corpus: dict. `prepare_corpus`'s result.
        vocab_size, max_seq_length, max_predictions_per_seq, dupe_factor, input_format,
            paragraphs_per_document, seed: as `train_vocab` and `write_pretraining_data`.

    Returns:
        dict: `spm_model`, `vocab` (train_vocab's summary), `train` and `heldout` (globs of
        the record shards) and `examples` (counts per split).

    Example:
    >>> corpus = prepare_corpus(pathlib.Path("demo_output"), "corpus/a.txt", "corpus/b.txt", 1.0)
    >>> data = prepare_records(pathlib.Path("demo_output"), corpus, vocab_size=40,
    ...                        max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2,
    ...                        input_format="text", paragraphs_per_document=1, seed=1)
    >>> data["examples"], data["spm_model"]
    ({'train': 60, 'heldout': 38}, 'demo_output/vocab/spm.model')
    """
    vocab = train_vocab(
        corpus["train"],
        str(out / "vocab" / "spm"),
        vocab_size=vocab_size,
        input_format=input_format,
        seed=seed,
        hard_vocab_limit=False,  # a small corpus gets a smaller vocabulary, not an error
    )
    spm_model = str(out / "vocab" / "spm.model")
    settings = {
        "max_seq_length": max_seq_length,
        "max_predictions_per_seq": max_predictions_per_seq,
        "input_format": input_format,
        "paragraphs_per_document": paragraphs_per_document,
        "seed": seed,
        "progress": False,
    }
    examples, files = {}, {}
    for split, dupe, shards in (("train", dupe_factor, 2), ("heldout", 1, 1)):
        folder = out / "records" / split
        stats = write_pretraining_data(
            input=corpus[split],
            spm_model=spm_model,
            output_dir=str(folder),
            dupe_factor=dupe,
            num_shards=shards,
            **settings,
        )
        examples[split] = stats.get("examples")
        files[split] = str(folder / "*.tfrecord")
    return {"spm_model": spm_model, "vocab": vocab, **files, "examples": examples}
