"""Multiple-choice data: RACE-style JSON and SWAG-style CSV, read as `ChoiceExamples`."""

from albert_keras.multiple_choice.choice_examples import ChoiceExamples
from albert_keras.multiple_choice.race_reader import read_race
from albert_keras.multiple_choice.swag_reader import read_swag


def read_choices(path, format: str = "auto") -> ChoiceExamples:
    """`read_swag` for `format="swag"` (or a `.csv` file with `"auto"`), else `read_race`."""
    if format == "swag" or (format == "auto" and str(path).lower().endswith(".csv")):
        return read_swag(path)
    return read_race(path)


__all__ = ["ChoiceExamples", "read_choices", "read_race", "read_swag"]
