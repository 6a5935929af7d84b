"""Every training command's flags reach its job function by name, and nothing else does."""

import argparse
import importlib
import inspect

import pytest

from albert_keras_cli.job_arguments import job_arguments, print_run
from albert_keras_cli.main import SUBCOMMANDS

# command -> (its required flags, the job function it runs)
COMMANDS = {
    "pretrain": (
        ["--records", "r/*", "--output_dir", "o"],
        "albert_keras.training.pretrain_job:pretrain",
    ),
    "distill": (
        ["--teacher", "t.keras", "--records", "r/*", "--output_dir", "o"],
        "albert_keras.distill.distill_job:distill",
    ),
    "finetune-glue": (
        ["--task", "RTE", "--model", "m.keras", "--output_dir", "o"],
        "albert_keras.training.finetune_glue:finetune_glue",
    ),
    "finetune-squad": (
        ["--version", "2.0", "--model", "m.keras", "--output_dir", "o"],
        "albert_keras.training.finetune_squad:finetune_squad",
    ),
}


def _parsed(command):
    parser = argparse.ArgumentParser()
    importlib.import_module(SUBCOMMANDS[command][0]).add_arguments(parser)
    return parser.parse_args(COMMANDS[command][0])


def _job(command):
    module, name = COMMANDS[command][1].split(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_flag_is_a_parameter_of_the_job(command):
    flags = set(vars(_parsed(command)))
    parameters = set(inspect.signature(_job(command)).parameters)
    assert flags - parameters == set(), f"{command}: flags no job parameter takes"
    # The job's only parameter without a flag is its progress setting.
    assert parameters - flags == {"verbose"}


def test_job_arguments_take_flags_by_name_and_values_on_top():
    def job(records, *, batch_size=32, config=None, verbose="auto"):
        pass

    flags = argparse.Namespace(
        records="r/*", batch_size=8, config=["num_layers=2"], verbose=True, command="x", other=1
    )
    assert job_arguments(flags, job, config={"num_layers": 2}) == {
        "records": "r/*",
        "batch_size": 8,
        "config": {"num_layers": 2},
    }
    with pytest.raises(TypeError, match="job takes no argument"):
        job_arguments(flags, job, seed=1)


def test_print_run_prefers_held_out_means_and_says_which(capsys):
    summary = {"steps": {"total": 5}, "eval": {"mlm_accuracy": 0.25}, "train": {"loss": 3.0},
               "eval_examples": 1600}  # fmt: skip
    print_run("distilled", summary, "out/")
    assert capsys.readouterr().out == (
        "distilled 5 steps -> out/: held-out (1,600 examples): mlm_accuracy 0.2500\n"
    )
    print_run("distilled", {**summary, "eval": {}}, "out/")
    assert capsys.readouterr().out == (
        "distilled 5 steps -> out/: training means of the last period (no --eval_records): "
        "loss 3.0000\n"
    )
