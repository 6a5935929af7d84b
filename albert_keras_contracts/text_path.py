"""Which version of ALBERT's text path made records or a model, and a one-line refusal.

The text path is everything between a raw string and its ids: the normalization
(`albert_keras_contracts.text_normalization`) and the piece post-processing
(`albert_keras_contracts.piece_split`). Its versions:

- `albert-official-1`: what artifacts that record none were made by: the LaTeX quotes
  ``` `` ``` and `''` turned into `"` (XLNet's rule, not ALBERT's), no digit-comma split outside
  SQuAD;
- `albert-official-2`: the official ALBERT code's ids (as Python 3 runs it).

The writer's `stats.json` and every saved `AlbertTokenizer` record `text_path` beside the
vocabulary's sha256. `pretrain`, `distill`, fine-tuning and `predict` refuse records or a model
of another version unless the user accepts it (`--accept_old_text_path`): records of version 1
then train as they are, on their older ids.
"""

from __future__ import annotations

TEXT_PATH = "albert-official-2"
UNRECORDED_TEXT_PATH = "albert-official-1"  # artifacts from before the version was recorded
ACCEPT_FLAG = "--accept_old_text_path"


def recorded_text_path(record: dict | None) -> str:
    """The text path a `stats.json` or a tokenizer config records (version 1 when it has none).

    Example:
    >>> recorded_text_path({"vocabulary_sha256": "ab12"}), recorded_text_path({"text_path": TEXT_PATH})
    ('albert-official-1', 'albert-official-2')
    """
    return (record or {}).get("text_path") or UNRECORDED_TEXT_PATH


def check_text_path(found: str, what: str, accept: bool = False) -> None:
    """Refuses, in one line naming both versions, something made by another text path.

    Args:
        found: str. The version it records (`recorded_text_path`).
        what: str. How the message names it (`"records/stats.json"`, `"--model run/model"`).
        accept: bool. The user accepts an older text path (`--accept_old_text_path`).

    Raises:
        ValueError: `found` is not today's `TEXT_PATH` and `accept` is false.

    Example:
    >>> check_text_path(TEXT_PATH, "records/stats.json")
    >>> check_text_path("albert-official-1", "records/stats.json", accept=True)
    """
    if found == TEXT_PATH or accept:
        return
    raise ValueError(
        f"{what} was made by text path {found}, not today's {TEXT_PATH} (the official ALBERT "
        f"ids: no '' -> \" replacement, digit-comma pieces split); write it again, or pass "
        f"{ACCEPT_FLAG} to use its older ids as they are"
    )
