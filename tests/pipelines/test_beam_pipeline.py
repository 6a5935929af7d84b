"""The Beam pipeline's structure (`pipelines.beam_pipeline`): SentencePiece is loaded once per
process, not once per DoFn instance; workers count it, with their CPU per step; a group's
documents are spilled packed, and come back the same; the shuffle carries where they lie, not
the text, and the spilled text is removed whatever the run's end."""

import json
import os
import re

# apache-beam is the `beam` extra, which `make install` installs: a broken install fails this
# module at import instead of skipping its tests.
import apache_beam  # noqa: F401
import pytest

from pipelines import beam_pieces, beam_pipeline
from pipelines.beam_writer import write_pretraining_data_beam
from pipelines.pretraining_data import main

SPM = "vocab/30k-clean.reconstructed.model"
BOOK = "corpus/gutenberg/1342-0.txt"  # its first 160 kB


def test_packed_documents_come_back_the_same():
    documents = [
        ["It was fine.", "", "Curly \u201cquotes\u201d, caf\u00e9 and \U0001f600."],
        ["One sentence only."],
        ["", ""],
        ["x" * 70_000, "a\tb  c"],
    ]
    text, sizes = beam_pieces.pack_documents(documents)
    assert isinstance(text, bytes) and isinstance(sizes, bytes)
    assert len(sizes) == 4 * (1 + 4 + 8)  # int32: the count, sentences per document, lengths
    assert beam_pieces.unpack_documents(text, sizes) == documents
    assert beam_pieces.unpack_documents(*beam_pieces.pack_documents([])) == []


def test_sentencepiece_loads_once_per_process_whatever_the_dofn_instances(
    shared_data, tmp_path, monkeypatch
):
    """Two worker threads in this process (multi_threading), each with its own DoFn instance,
    and the driver, which checks the model first: one load in all."""
    loads = []
    load = beam_pipeline.encoder_from_bytes
    monkeypatch.setattr(beam_pipeline, "encoder_from_bytes", lambda *a: loads.append(1) or load(*a))
    monkeypatch.setattr(beam_pipeline, "_ENCODERS", {})  # as in a fresh process
    stats = write_pretraining_data_beam(
        input=str(shared_data / BOOK),
        spm_model=str(shared_data / SPM),
        output_dir=str(tmp_path / "out"),
        progress=False,
        beam_args=["--direct_num_workers=2", "--direct_running_mode=multi_threading"],
        max_seq_length=128,
        dupe_factor=1,
        num_shards=4,
        group_chars=1 << 13,
    )
    assert stats["examples"] > 200
    assert len(loads) == 1


@pytest.mark.slow  # make test-all only (issue 46): a whole run; faster tests run its lines
def test_worker_processes_load_sentencepiece_once_each_and_count_their_cpu(
    shared_data, tmp_path, capsys
):
    arguments = ["--input", str(shared_data / BOOK), "--spm_model", str(shared_data / SPM)]
    arguments += ["--output_dir", str(tmp_path / "out"), "--max_seq_length", "128"]
    arguments += ["--dupe_factor", "1", "--num_shards", "3", "--group_chars", str(1 << 13)]
    arguments += ["--runner", "DirectRunner", "--direct_num_workers=2"]
    assert main([*arguments, "--direct_running_mode=multi_processing"]) == 0
    line = next(
        line for line in capsys.readouterr().err.splitlines() if "workers' CPU-seconds" in line
    )
    found = re.search(r"read ([\d.]+), make ([\d.]+), write ([\d.]+); .* loaded (\d+) ", line)
    read, make, write, loads = found.groups()
    assert int(loads) == 2  # one per worker process (both make shards: 3 shards, 2 workers)
    assert float(make) > float(read) > 0 and float(write) >= 0
    assert json.loads((tmp_path / "out" / "stats.json").read_text())["examples"] > 200


def test_a_model_changed_under_a_running_pipeline_is_refused(shared_data, tmp_path, monkeypatch):
    monkeypatch.setattr(beam_pipeline, "_ENCODERS", {})
    path = tmp_path / "spm.model"
    path.write_bytes((shared_data / SPM).read_bytes())
    with pytest.raises(ValueError, match=r"spm.model' changed while the pipeline ran"):
        beam_pipeline.shared_encoder(str(path), None, "0" * 64)


def _write(shared_data, output_dir):
    return write_pretraining_data_beam(
        input=str(shared_data / BOOK),
        spm_model=str(shared_data / SPM),
        output_dir=str(output_dir),
        progress=False,
        max_seq_length=128,
        dupe_factor=1,
        num_shards=3,
        group_chars=1 << 13,
    )


def test_the_shuffle_carries_where_the_text_lies_and_the_spill_folder_goes(
    shared_data, tmp_path, monkeypatch
):
    """The shuffled pieces are (group, path, (spill file, offset, sizes)): no text crosses the
    runner (its driver held every shuffled byte); the spilled text is removed at the end."""
    shuffled = []
    groups = beam_pipeline._groups

    def recording(pieces):
        pieces = list(pieces)
        shuffled.extend(pieces)
        return groups(pieces)

    monkeypatch.setattr(beam_pipeline, "_groups", recording)  # the in-process runner's worker
    stats = _write(shared_data, tmp_path / "out")
    assert stats["examples"] > 200
    groups_made = {group for group, _, _ in shuffled}
    assert len(shuffled) == len(groups_made) > 10  # one file: a piece per group
    for group, path, (spilled, offset, text_bytes, sizes_bytes) in shuffled:
        assert isinstance(group, int) and path == str(shared_data / BOOK)
        assert f"{tmp_path / 'out'}/{beam_pieces.SPILL_PREFIX}" in spilled
        assert offset >= 0 and text_bytes > 0 and sizes_bytes > 0
    assert not [n for n in os.listdir(tmp_path / "out") if n.startswith(beam_pieces.SPILL_PREFIX)]


def test_a_failed_run_removes_its_spilled_text(shared_data, tmp_path, monkeypatch):
    def fail(*_):
        raise RuntimeError("a worker failed")

    monkeypatch.setattr(beam_pipeline, "make_records", fail)
    with pytest.raises(RuntimeError, match="a worker failed"):
        _write(shared_data, tmp_path / "out")
    left = os.listdir(tmp_path / "out") if (tmp_path / "out").exists() else []
    assert not [n for n in left if n.startswith(beam_pieces.SPILL_PREFIX)]


def test_a_truncated_spill_file_is_an_error_naming_it(tmp_path):
    folder = beam_pieces.spill_folder(str(tmp_path))
    ((_, (path, offset, text_bytes, sizes_bytes)),) = beam_pieces.spill_pieces(
        folder, [(0, [["It rained.", "Again."]])]
    )
    with open(path, "r+b") as f:
        f.truncate(text_bytes)
    with pytest.raises(OSError, match=r"\.bin: \d+ bytes at offset 0, expected a whole piece"):
        beam_pieces.read_piece((path, offset, text_bytes, sizes_bytes))
    beam_pieces.remove_spill_folder(folder)
    assert os.listdir(tmp_path) == []
    beam_pieces.remove_spill_folder(folder)  # gone already: not an error


def test_a_killed_runs_spill_folders_are_removed_and_nothing_else(tmp_path):
    from pipelines.beam_pieces import remove_stale_spill_folders, spill_folder, spill_pieces

    for _ in range(2):  # two dead runs' folders, each with a file
        spill_pieces(spill_folder(str(tmp_path)), [(0, [["Left behind."]])])
    (tmp_path / "data-00000-of-00001.tfrecord").write_bytes(b"kept")
    (tmp_path / ".beam-text-notes.txt").write_text("a file, not a spill folder")
    (tmp_path / (".beam-text-" + "0123abcd" * 4)).mkdir()  # killed before its first file
    (tmp_path / ".beam-text-0123").mkdir()  # a look-alike: not the name a run makes
    (tmp_path / "user-folder").mkdir()
    assert remove_stale_spill_folders(str(tmp_path)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".beam-text-0123",
        ".beam-text-notes.txt",
        "data-00000-of-00001.tfrecord",
        "user-folder",
    ]
    assert remove_stale_spill_folders(str(tmp_path)) == 0
