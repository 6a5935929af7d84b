"""The data writer's own lines are right (issue 43): Ctrl-C is one line saying what was kept,
exit 130 (it printed a 57-line traceback), and the progress lines count the examples the last
line does (they disagreed)."""

import re

import pytest

from pipelines import pretraining_data, writer_task
from pipelines.pretraining_data import main, write_pretraining_data

SPM = "vocab/30k-clean.reconstructed.model"
BOOK = "corpus/gutenberg/1342-0.txt"


def _argv(shared_data, out):
    return ["--input", str(shared_data / BOOK), "--spm_model", str(shared_data / SPM),
            "--output_dir", str(out), "--max_seq_length", "64", "--dupe_factor", "1",
            "--num_shards", "2", "--num_workers", "1"]  # fmt: skip


def test_ctrl_c_is_one_line_saying_what_was_kept(shared_data, tmp_path, monkeypatch, capsys):
    out = tmp_path / "records"
    real = write_pretraining_data

    def interrupted_after_one_shard(settings, progress):
        real(settings, progress=False)  # both shards written; then "Ctrl-C"
        (out / "pretraining-00001-of-00002.tfrecord").unlink()
        raise KeyboardInterrupt

    monkeypatch.setattr(pretraining_data, "write_pretraining_data", interrupted_after_one_shard)
    assert main(_argv(shared_data, out)) == 130
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines == [
        (
            f"pretraining_data: interrupted; 1 finished shard(s) and the last checkpoint of each "
            f"unfinished one kept in {out}: rerun the same command to resume"
        )
    ]


def test_ctrl_c_before_anything_was_written(tmp_path, monkeypatch, capsys):
    def interrupted(settings, progress):
        raise KeyboardInterrupt

    monkeypatch.setattr(pretraining_data, "write_pretraining_data", interrupted)
    argv = ["--input", "c.txt", "--spm_model", "s.model", "--output_dir", str(tmp_path / "o")]
    assert main(argv) == 130
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines == [
        (
            f"pretraining_data: interrupted; nothing was written to {tmp_path / 'o'}: rerun the "
            "same command to start again"
        )
    ]


def _examples(lines):
    """The examples each progress line counts, and the last line's."""
    counted = [int(m.group(1).replace(",", "")) for line in lines
               if (m := re.search(r"documents, ([\d,]+) examples", line))]  # fmt: skip
    final = re.search(r"wrote ([\d,]+) examples to", lines[-1])
    return counted, int(final.group(1).replace(",", ""))


@pytest.mark.parametrize("resumed", [False, True])
def test_the_progress_lines_and_the_last_line_agree(
    shared_data, tmp_path, monkeypatch, capsys, resumed
):
    monkeypatch.setattr(writer_task, "_PROGRESS_SECONDS", 0.0)  # a line after every group
    out = tmp_path / "records"
    if resumed:  # one shard finished by an earlier run: counted in the progress lines too
        assert main(_argv(shared_data, out) + ["--quiet"]) == 0
        (out / "pretraining-00000-of-00002.tfrecord").unlink()
        capsys.readouterr()
    assert main(_argv(shared_data, out)) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    counted, final = _examples(lines)
    assert counted and counted[-1] == final, lines
    assert counted == sorted(counted)
    if resumed:
        assert lines[0] == "pretraining_data: 1 of 2 shards already finished"
        assert counted[0] > 0  # the finished shard's examples, from the first line on


def test_the_beam_runners_closing_line_counts_the_load_it_shares(shared_data, tmp_path, capsys):
    pytest.importorskip("apache_beam")  # an optional extra (`albert-keras[beam]`)
    argv = _argv(shared_data, tmp_path / "beam")[:-2] + ["--runner", "DirectRunner"]
    assert main(argv) == 0
    line = next(line for line in capsys.readouterr().err.splitlines() if "CPU-seconds" in line)
    # In-process workers share the driver's SentencePiece: it read "loaded 0 time(s)".
    assert line.endswith("; SentencePiece loaded once, in this process (its in-process workers "
                         "share it)")  # fmt: skip
    assert "in the writer's steps (not Beam's own work): read " in line
