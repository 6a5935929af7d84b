"""The demo's fine-tuning task: which library wrote this docstring paragraph?

A real, small classification task made from the demo corpus (no download): each paragraph is
labelled with its source (`stdlib`, `keras`, `numpy`, ...). Training rows come from the corpus's
`train/` files and dev rows from `heldout/` (modules never seen in pretraining or fine-tuning).
The files use SST-2's layout (`sentence<TAB>label` with a header), so GLUE's reader, metrics and
fine-tuning job run on it unchanged.
"""

import pathlib
import re

import numpy as np

from albert_keras.glue.glue_task import GlueTask, TsvLayout


def _paragraphs(path: pathlib.Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    # One line per example: the TSV layout has no quoting, so tabs and newlines become spaces.
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def write_source_task(
    corpus_dir: str,
    task_dir: str,
    *,
    train_per_class: int = 600,
    dev_per_class: int = 150,
    seed: int = 12345,
) -> GlueTask:
    """Writes `task_dir/{train,dev,test}.tsv` (balanced classes) and returns the task's `GlueTask`.

    Args:
        corpus_dir: str. The output of `extract_docstring_corpus` (with `train/`, `heldout/`).
        task_dir: str. Where the two TSV files go.
        train_per_class, dev_per_class: int. Rows drawn per source (fewer if a source is small).
        seed: int. The draw of rows.

    Example:
    >>> from albert_keras.demo.docstring_corpus import extract_docstring_corpus
    >>> _ = extract_docstring_corpus("demo_output/corpus", sources=("stdlib", "reference"),
    ...                              max_megabytes_per_source=0.05)
    >>> task = write_source_task("demo_output/corpus", "demo_output/source_task",
    ...                          train_per_class=20, dev_per_class=5)
    >>> task.labels, sorted(os.listdir("demo_output/source_task"))
    (('reference', 'stdlib'), ['dev.tsv', 'test.tsv', 'train.tsv'])
    """
    corpus_dir, task_dir = pathlib.Path(corpus_dir), pathlib.Path(task_dir)
    labels = tuple(sorted(p.stem for p in (corpus_dir / "train").glob("*.txt")))
    if len(labels) < 2:
        raise ValueError(f"{corpus_dir / 'train'} holds fewer than two sources")
    rng = np.random.default_rng(seed)
    task_dir.mkdir(parents=True, exist_ok=True)
    heldout_rows = {}
    for split, folder, per_class in (
        ("train", "train", train_per_class),
        ("dev", "heldout", dev_per_class),
    ):
        rows = []
        for label in labels:
            paragraphs = _paragraphs(corpus_dir / folder / f"{label}.txt")
            order = rng.permutation(len(paragraphs))
            rows += [(paragraphs[i], label) for i in sorted(order[:per_class])]
            if split == "dev":  # the next ones, unlabelled, make the test split
                heldout_rows[label] = [paragraphs[i] for i in sorted(order[per_class:][:per_class])]
        order = rng.permutation(len(rows))
        _write_tsv(
            task_dir / f"{split}.tsv",
            ["sentence\tlabel"] + [f"{rows[i][0]}\t{rows[i][1]}" for i in order],
        )
    test = [text for label in labels for text in heldout_rows[label]]
    if test:
        lines = [f"{i}\t{text}" for i, text in enumerate(test)]
        _write_tsv(task_dir / "test.tsv", ["index\tsentence", *lines])
    else:  # a corpus too small to leave unlabelled rows: dev predictions only
        (task_dir / "test.tsv").unlink(missing_ok=True)
    return GlueTask(
        name="docstring-source",
        directory=task_dir.name,
        splits={
            "train": TsvLayout("train.tsv", text_a=0, text_b=None, label=1),
            "dev": TsvLayout("dev.tsv", text_a=0, text_b=None, label=1),
            "test": TsvLayout("test.tsv", text_a=1, text_b=None, label=None, index=0),
        },
        labels=labels,
        metrics=("accuracy",),
        dev_splits=("dev",),
        test_splits={"test": "docstring-source"},
        learning_rate=1e-4,
        batch_size=32,
        train_steps=300,
        warmup_steps=30,
        eval_every=50,
        max_seq_length=128,
    )


def _write_tsv(path: pathlib.Path, lines: list[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
