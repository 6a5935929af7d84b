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

import json
import os

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


def saved_text_path(model, model_path: str) -> tuple[str | None, str]:
    """`(version, where)`: the text path a saved model was trained with: its preprocessor's
    tokenizer's (`AlbertTokenizer.text_path`, in the `.keras` config), else the one its run
    recorded in the `summary.json` beside it (`config.text_path`: pretrain's and distill's
    `backbone.keras` carry no tokenizer; a pretraining summary without one is version 1); `(None, model_path)` when
    neither says.

    Args:
        model: the loaded model (anything: no attribute, no version).
        model_path: str. Its `.keras` file.

    Example:
    >>> saved_text_path(object(), "old.keras")
    (None, 'old.keras')
    """
    tokenizer = getattr(getattr(model, "preprocessor", None), "tokenizer", None)
    carried = getattr(tokenizer, "text_path", None)
    if isinstance(carried, str):
        return carried, model_path
    summary = os.path.join(os.path.dirname(model_path), "summary.json")
    if not os.path.isfile(model_path) or not os.path.isfile(summary):
        return None, model_path
    try:
        with open(summary) as file:
            recorded = json.load(file)
    except (OSError, ValueError):
        return None, model_path
    if not isinstance(recorded, dict) or "vocabulary_sha256" not in recorded:
        return None, model_path  # not a pretraining run's summary
    config = recorded.get("config") if isinstance(recorded.get("config"), dict) else {}
    if "text_path" not in config:
        return UNRECORDED_TEXT_PATH, summary
    found = config["text_path"]  # the records' (`RecordInputs.description`); None: not known
    return (found, summary) if isinstance(found, str) else (None, model_path)


def check_model_text_path(model, model_name: str, accept: bool = False) -> None:
    """Refuses (`check_text_path`) a saved model trained on another text path's ids; a model
    that records none (`saved_text_path` None) passes.

    Example:
    >>> check_model_text_path(object(), "old.keras")
    """
    found, where = saved_text_path(model, model_name)
    if found is not None:
        check_text_path(
            found, model_name if where == model_name else f"{model_name} ({where})", accept
        )
