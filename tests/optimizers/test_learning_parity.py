"""benchmarks/learning_parity.py, short: ours and HF's AlbertForPreTraining learn alike.

One random init in both, the same batches from our reader, float32; with stock Keras Adam
(dense embedding gradients from our train step) against Keras's Adam written for torch, and
our `Lamb` against the official LAMB written for torch on HF's separate q, k and v.
"""

import importlib.util
import pathlib

import pytest
from synthetic_records import MAX_PREDICTIONS, SEQ_LENGTH, VOCABULARY_SIZE, write_synthetic_records

pytest.importorskip("torch", reason="torch not installed (make install-hf)")
pytest.importorskip("transformers", reason="transformers not installed (make install-hf)")

SCRIPT = pathlib.Path(__file__).parents[2] / "benchmarks" / "learning_parity.py"


@pytest.fixture(scope="module")
def learning_parity():
    spec = importlib.util.spec_from_file_location("learning_parity", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parity_records")
    write_synthetic_records(folder / "train.tfrecord", 256, seed=0)
    write_synthetic_records(folder / "heldout.tfrecord", 32, seed=1)
    return str(folder / "train.tfrecord"), str(folder / "heldout.tfrecord"), VOCABULARY_SIZE


def argv(records, steps):
    return ["--records", records[0], "--heldout", records[1], "--vocabulary_size", "100",
            "--steps", str(steps), "--eval_at", str(steps), "--batch_size", "8",
            "--seq_length", str(SEQ_LENGTH), "--max_predictions", str(MAX_PREDICTIONS),
            "--num_layers", "2", "--embedding_dim", "8", "--hidden_dim", "16",
            "--intermediate_dim", "32", "--heldout_batches", "2"]  # fmt: skip


def check_parity(result, steps):
    zero = result["step_zero"]
    assert abs(zero["loss_ours"] - zero["loss_hf"]) < 1e-5
    assert zero["gradient_max_difference"] < 1e-6 < zero["gradient_max"]
    assert len(result["losses"]) == steps
    assert result["max_loss_difference"] < 1e-4
    # And so do the weights, the sharper check: with one LAMB trust ratio over the fused q/k/v
    # kernel (the code before issue 33's fix) the losses still agree to 1.2e-5 over these 30
    # steps, but the weights differ by 2.4e-2. Stock Adam on sparse embedding gradients (before
    # the dense-gradient train step) misses the losses by 1.3e-3 within 10 steps.
    assert result["weight_max_difference"] < 1e-5
    # The curve is a curve: the weights moved, so the losses of the steps differ.
    assert len({round(ours, 4) for ours, _ in result["losses"]}) > steps // 2
    heldout = result["heldout"][steps]
    # Same argmax almost everywhere: 2 batches of 8 sentences, 64 masked positions.
    assert abs(heldout["ours_sop"] - heldout["hf_sop"]) <= 1 / 16
    assert abs(heldout["ours_mlm"] - heldout["hf_mlm"]) <= 1 / 30


@pytest.mark.parametrize(
    "optimizer, other, learning_rate", [("adam", "lamb", "0.001"), ("lamb", "adam", "0.01")]
)
def test_thirty_steps_in_parity_and_the_command_prints_them(
    learning_parity, records, tmp_path, capsys, monkeypatch, optimizer, other, learning_rate
):
    """The command run with `--optimizer`: the result it prints is in parity, and it prints
    its command line and its table for that optimizer only (one run checks both: each run
    builds both models and traces our train step)."""
    results, print_result = [], learning_parity.print_result

    def kept_and_printed(result):
        results.append(result)
        print_result(result)

    monkeypatch.setattr(learning_parity, "print_result", kept_and_printed)
    command = [*argv(records, 30), "--optimizer", optimizer, "--workdir", str(tmp_path)]
    assert learning_parity.main(command) == 0
    assert [result["optimizer"] for result in results] == [optimizer]
    check_parity(results[0], 30)
    out = capsys.readouterr().out
    assert out.startswith("$ python ") and "--vocabulary_size 100" in out.splitlines()[0]
    assert f"== {optimizer} (learning rate {learning_rate})" in out and f"== {other}" not in out
    assert "step 0: loss ours" in out and "largest training-loss difference over 30 steps" in out


@pytest.mark.parametrize(
    "bad",
    [
        ["--records", "r", "--heldout", "h"],  # no --vocabulary_size
        ["--records", "r"],  # no --heldout
        ["--embedding_dim", "16", "--hidden_dim", "16"],  # HF would train an identity
    ],
)
def test_bad_flags_are_one_line_and_exit_2(learning_parity, bad, capsys):
    with pytest.raises(SystemExit) as raised:
        learning_parity.parse_arguments(bad)
    assert raised.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("usage: ") is False and "error: --" in last
