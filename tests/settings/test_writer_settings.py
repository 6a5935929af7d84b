"""`WriterSettings`: the data writer's settings, written once (issue 31). Its flags are today's,
a bad value is refused in one line before anything is written, and the writer called with a
settings object or with keywords records the same `stats.json` settings and writes the same
bytes."""

import argparse
import dataclasses
import json
import subprocess
import sys

import pytest

from albert_keras_settings import WriterSettings
from albert_keras_settings.settings_flags import add_settings_flags
from pipelines import pretraining_data
from pipelines.pretraining_data import build_parser, write_pretraining_data
from pipelines.pretraining_examples import ExampleConfig

REQUIRED = {"input": "c.txt", "spm_model": "s.model", "output_dir": "out"}
SENTENCES = ["The cat sat on the mat.", "A dog ran in the park.", "It was a fine day."]

# The writer's flags before issue 31 (its hand-written parser): option strings -> (dest,
# default, choices, required). `python -m pipelines.pretraining_data` must still read so.
TODAY = {
    ("--input",): ("input", None, None, True),
    ("--spm_model",): ("spm_model", None, None, True),
    ("--output_dir",): ("output_dir", None, None, True),
    ("--max_seq_length",): ("max_seq_length", 512, None, False),
    ("--max_predictions_per_seq",): ("max_predictions_per_seq", 20, None, False),
    ("--masked_lm_prob",): ("masked_lm_prob", 0.15, None, False),
    ("--dupe_factor",): ("dupe_factor", 40, None, False),
    ("--short_seq_prob",): ("short_seq_prob", 0.1, None, False),
    ("--ngram",): ("ngram", 3, None, False),
    ("--sentence_objective",): ("sentence_objective", "sop", ("sop", "nsp", "none"), False),
    ("--packing",): ("packing", None, ("full_sentences", "doc_sentences"), False),
    ("--num_shards",): ("num_shards", 1, None, False),
    ("--seed",): ("seed", 12345, None, False),
    ("--num_workers",): ("num_workers", None, None, False),
    ("--task_index",): ("task_index", 0, None, False),
    ("--num_tasks",): ("num_tasks", 1, None, False),
    ("--input_format",): ("input_format", "text", ("text", "sentences"), False),
    ("--paragraphs_per_document",): ("paragraphs_per_document", 20, None, False),
    (
        "--lower_case",
        "--no-lower_case",
        "--do_lower_case",
        "--no-do_lower_case",
    ): ("do_lower_case", None, None, False),
    ("--group_chars",): ("group_chars", 131072, None, False),
    ("--checkpoint_seconds",): ("checkpoint_seconds", 30.0, None, False),
    ("--quiet",): ("quiet", False, None, False),
    ("--overwrite",): ("overwrite", False, None, False),
    ("--runner",): ("runner", None, None, False),
}


def _flags(parser: argparse.ArgumentParser) -> dict:
    return {
        tuple(action.option_strings): (
            action.dest,
            action.default,
            tuple(action.choices) if action.choices else None,
            action.required,
        )
        for action in parser._actions
        if action.dest != "help"
    }


def test_the_flags_are_todays():
    assert _flags(build_parser()) == TODAY
    # Each value type as before: an int flag reads "7" as 7, a float one "0.2" as 0.2.
    args = build_parser().parse_args(
        [*(f"--{k}={v}" for k, v in REQUIRED.items()), "--ngram=7", "--masked_lm_prob=0.2"]
    )
    assert (args.ngram, args.masked_lm_prob, args.do_lower_case) == (7, 0.2, None)


def test_the_flags_come_from_the_dataclass():
    """Every generated flag's default and choices are the field's: written once, there."""
    generated = argparse.ArgumentParser()
    add_settings_flags(generated, WriterSettings)
    fields = {f.name: f for f in dataclasses.fields(WriterSettings)}
    flags = _flags(generated)
    assert {dest for dest, *_ in flags.values()} == set(fields) - {"lower_case"}  # its own flag
    for dest, default, choices, required in flags.values():
        field = fields[dest]
        assert required == (field.default is dataclasses.MISSING)
        assert required or default == field.default
        assert choices == field.metadata["choices"]
    writer = _flags(build_parser())
    # All but --num_workers, whose default the command gives (one per core).
    shared = {names: row for names, row in flags.items() if names != ("--num_workers",)}
    assert shared == {names: writer[names] for names in shared}


def test_example_config_is_a_view_of_the_settings():
    settings = WriterSettings(**REQUIRED, max_seq_length=64, dupe_factor=3, seed=7)
    config = ExampleConfig.of(settings)
    assert (config.max_seq_length, config.dupe_factor, config.seed) == (64, 3, 7)
    assert list(vars(config)) == [  # stats.json's settings begin so, in this order
        "max_seq_length", "max_predictions_per_seq", "masked_lm_prob", "dupe_factor",
        "short_seq_prob", "ngram", "sentence_objective", "packing", "seed",
    ]  # fmt: skip
    assert ExampleConfig.of() == ExampleConfig.of(WriterSettings(**REQUIRED))


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"max_seq_length": 4}, "max_seq_length=4 must be >= 5"),
        ({"max_predictions_per_seq": 0}, "max_predictions_per_seq=0 must be >= 1"),
        ({"masked_lm_prob": 1.0}, "masked_lm_prob=1.0 must be in (0, 1)"),
        ({"dupe_factor": 0}, "dupe_factor=0 must be >= 1"),
        ({"short_seq_prob": 1.5}, "short_seq_prob=1.5 must be in [0, 1]"),
        ({"ngram": 0}, "ngram=0 must be >= 1"),
        (
            {"sentence_objective": "mlm"},
            "sentence_objective='mlm'; expected one of ('sop', 'nsp', 'none')",
        ),
        (
            {"packing": "tight", "sentence_objective": "none"},
            "packing='tight'; expected one of ('full_sentences', 'doc_sentences')",
        ),
        (
            {"packing": "full_sentences"},
            "packing='full_sentences' needs sentence_objective='none' (got 'sop'): a packed "
            + "example is one segment",
        ),
        ({"seed": -1}, "seed=-1 must be >= 0"),
        ({"num_shards": 0}, "num_shards=0 must be >= 1"),
        ({"num_workers": 0}, "num_workers=0 must be >= 1"),
        ({"num_tasks": 0, "task_index": 0}, "num_tasks=0 must be >= 1"),
        ({"num_tasks": 2, "task_index": 2}, "task_index=2 must be in [0, 2)"),
        ({"group_chars": 0}, "group_chars=0 must be >= 1"),
        (
            {"input_format": "html"},
            "input_format='html'; expected one of ('text', 'sentences')",
        ),
        ({"paragraphs_per_document": 0}, "paragraphs_per_document=0 must be >= 1"),
    ],
)
def test_a_bad_value_fails_when_the_settings_are_made(bad, message):
    with pytest.raises(ValueError) as error:
        WriterSettings(**REQUIRED, **bad)
    assert str(error.value) == message


def test_a_bad_flag_is_one_line_and_exit_2_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["--input", str(tmp_path / "none.txt"), "--spm_model", "s.model"]
    code = pretraining_data.main([*argv, "--output_dir", str(out), "--ngram", "0"])
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err == "pretraining_data: error: ngram=0 must be >= 1\n"


def test_an_unknown_or_missing_setting_is_a_type_error():
    with pytest.raises(TypeError, match="WriterSettings has no setting 'inputs'; known: "):
        write_pretraining_data(inputs="c.txt", spm_model="s.model", output_dir="out")
    with pytest.raises(TypeError, match="^WriterSettings needs spm_model, output_dir$"):
        write_pretraining_data(input="c.txt")


def test_a_list_of_patterns_is_kept_frozen():
    settings = WriterSettings(**{**REQUIRED, "input": ["a/*.txt", "b/*.txt"]})
    assert settings.input == ("a/*.txt", "b/*.txt") and hash(settings)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("writer_settings")
    text = "\n\n".join(" ".join(SENTENCES[i % 3 :] + SENTENCES[: i % 3]) for i in range(60))
    (root / "a.txt").write_text(text + "\n")
    return root


def test_settings_and_keywords_record_the_same_stats(corpus, tiny_spm, tmp_path):
    small = {"max_seq_length": 32, "max_predictions_per_seq": 5, "dupe_factor": 2}
    small |= {"num_shards": 2, "paragraphs_per_document": 4, "group_chars": 200}
    keywords = {"input": str(corpus / "a.txt"), "spm_model": str(tiny_spm), **small}
    by_keywords = write_pretraining_data(output_dir=str(tmp_path / "k"), progress=False, **keywords)
    settings = WriterSettings(output_dir=str(tmp_path / "s"), **keywords)
    by_settings = write_pretraining_data(settings, progress=False)
    stats = [json.loads((tmp_path / name / "stats.json").read_text()) for name in "ks"]
    # What the writer recorded before issue 31 for this run: these keys, in this order.
    assert list(stats[0]["settings"]) == [
        "max_seq_length", "max_predictions_per_seq", "masked_lm_prob", "dupe_factor",
        "short_seq_prob", "ngram", "sentence_objective", "packing", "seed", "num_shards",
        "input_format", "paragraphs_per_document", "lower_case", "group_chars",
        "vocabulary_size", "vocabulary_sha256", "text_path",
    ]  # fmt: skip
    assert {k: v for k, v in stats[0]["settings"].items() if k != "vocabulary_sha256"} == {
        **small, "masked_lm_prob": 0.15, "short_seq_prob": 0.1, "ngram": 3,
        "sentence_objective": "sop", "packing": None, "seed": 12345, "input_format": "text",
        "lower_case": True, "vocabulary_size": 29, "text_path": "albert-official-2",
    }  # fmt: skip
    assert stats[0]["settings"] == stats[1]["settings"] == by_settings["settings"]
    assert by_keywords["examples"] == by_settings["examples"] > 0
    for name in by_settings["shards"]:
        assert (tmp_path / "k" / name).read_bytes() == (tmp_path / "s" / name).read_bytes()
    # Keywords over a settings object replace those fields, as `dataclasses.replace`.
    again = write_pretraining_data(settings, progress=False, output_dir=str(tmp_path / "r"))
    assert again["settings"] == by_settings["settings"]


def test_the_beam_driver_refuses_a_task_share(tmp_path):
    pytest.importorskip("apache_beam")
    from pipelines.beam_writer import write_pretraining_data_beam

    with pytest.raises(ValueError) as error:
        write_pretraining_data_beam(**REQUIRED, num_tasks=2, task_index=1)
    assert str(error.value) == (
        "--task_index/--num_tasks do not apply with --runner (Beam spreads the work)"
    )


def test_the_help_does_not_import_tensorflow():
    code = (
        "import sys; from pipelines.pretraining_data import build_parser; "
        "build_parser().format_help(); print('tensorflow' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "False\n"
