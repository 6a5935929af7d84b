"""ImportedModel: what `import_checkpoint` read, for the command to save and report."""

from __future__ import annotations

import dataclasses
import pathlib


@dataclasses.dataclass
class ImportedModel:
    """A converted `AlbertPretrainer` and an account of the conversion.

    Args:
        pretrainer: `AlbertPretrainer`. The model, backbone and heads.
        source: str. `"tf1"`, `"hf"`, `"keras-hub"` or `"keras"`.
        path: Path. The checkpoint read (inside an unpacked archive: its name there).
        mapped: list of str. What was mapped, one line per part (e.g. `"pooler: 2 variables"`).
        skipped: list of str. Variables deliberately not read (optimizer slots, step counter).
        fresh_parts: list of str. Parts absent in the source, left at their fresh init.
        notes: list of str. Anything else the user should know.
        sentencepiece: bytes or None. The SentencePiece model found with the weights.
        sentencepiece_name: str or None. Its file name there (e.g. `30k-clean.model`).

    Example:
    >>> from albert_keras.convert import export_model, import_checkpoint
    >>> _ = export_model(keras.saving.load_model("albert.keras"), "hf", "albert_hf/")
    >>> imported = import_checkpoint("hf", "albert_hf/")
    >>> imported.source, imported.fresh_parts
    ('hf', [])
    """

    pretrainer: object
    source: str
    path: pathlib.Path
    mapped: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)
    fresh_parts: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)
    sentencepiece: bytes | None = None
    sentencepiece_name: str | None = None
