"""A tiny release for the tests: a SentencePiece model with ALBERT's special ids, and a tarball
laid out as the official ones (albert_base_v2.tar.gz: `albert_base/{albert_config.json,
model.ckpt-best.*, 30k-clean.model}`).

Shared by tests/conftest.py, tests/convert and tests/presets (tests/ is on sys.path through
tests/conftest.py), so the release layout is written in one place.
"""

import pathlib
import shutil
import tarfile
from collections.abc import Callable

TINY_TEXT = "the cat sat on the mat . a dog ran in the park . it was a fine day . " * 20


def train_tiny_sentencepiece(
    prefix: pathlib.Path, text: str = TINY_TEXT, vocab_size: int = 60, **trainer_options
) -> pathlib.Path:
    """A real SentencePiece model trained on `text`'s " . "-separated sentences in a fraction of
    a second, with ALBERT's special ids (<pad> 0, <unk> 1, [CLS] 2, [SEP] 3, [MASK] 4).

    `vocab_size` is an upper bound (`hard_vocab_limit=False`): a tiny text yields fewer pieces.
    `trainer_options` go to `SentencePieceTrainer.train` as they are (`add_dummy_prefix=False`).
    Returns the `.model` path (`prefix.model`; `prefix.vocab` is written beside it).
    """
    import sentencepiece  # here, not at the top: tests/conftest.py imports this module

    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(text.split(" . ")),
        model_prefix=str(prefix),
        vocab_size=vocab_size,
        hard_vocab_limit=False,
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        control_symbols=["[CLS]", "[SEP]", "[MASK]"],
        minloglevel=2,
        **trainer_options,
    )
    return prefix.with_suffix(".model")


def write_release_tarball(
    archive: pathlib.Path,
    write_checkpoint: Callable[[pathlib.Path], object],
    spm_model: pathlib.Path,
    folder_name: str = "albert_tiny",
) -> pathlib.Path:
    """Writes `archive` (a .tar.gz) holding `folder_name/` as the official releases do.

    Args:
        archive: Path. The tarball to write; a staging folder is made beside it.
        write_checkpoint: called with the release folder; writes `albert_config.json` and the
            TF1 checkpoint there (with the package's writer, or one independent of it).
        spm_model: Path. Copied into the folder as `30k-clean.model`.
        folder_name: str. The one top-level folder of the archive.
    """
    folder = archive.parent / f"{archive.name}.staging" / folder_name
    folder.mkdir(parents=True)
    write_checkpoint(folder)
    shutil.copyfile(spm_model, folder / "30k-clean.model")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=folder_name)
    return archive
