"""What `--help` shows (issue 30): whole sentences, and every flag's default."""

import pytest

from albert_keras_cli.main import main


def test_the_top_level_help_is_whole_sentences(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "ALBERT (A Lite BERT) in Keras: pretrain, fine-tune, distil, convert, export and "
        "predict. Run `albert-keras COMMAND --help` for a command's flags and their defaults."
    ) in text


def _help(capsys, command: str) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_every_default_is_shown(capsys):
    demo = _help(capsys, "demo")
    assert "--pretrain_steps PRETRAIN_STEPS pretraining steps (default: 1000)" in demo
    assert "(default: the demo's)" not in demo
    glue = _help(capsys, "finetune-glue")
    assert "--batch_size BATCH_SIZE none: the official batch for the task (default: None)" in glue
    assert "--patience PATIENCE stop after" in glue and "(0: never) (default: 5)" in glue
    assert "--batch_size BATCH_SIZE examples per batch (default: 32)" in _help(capsys, "predict")


def test_strategy_is_one_flag_with_the_same_choices_everywhere(capsys):
    choices = "--strategy {auto,tpu,gpu,mirrored,multi_worker,one_device,cpu}"
    for command in ("pretrain", "distill", "finetune-squad"):
        assert choices in _help(capsys, command), command
    with pytest.raises(SystemExit) as exit_:
        main(["finetune-squad", "--version", "1.1", "--model", "m", "--output_dir", "o",
              "--strategy", "gpus"])  # fmt: skip
    assert exit_.value.code == 2
    assert "invalid choice: 'gpus'" in capsys.readouterr().err
