"""The Beam pipeline (`--runner`) writes the local writer's shards byte for byte, and the same
`stats.json`, on the DirectRunner with two workers; bad input is skipped and counted alike; and
`pipelines` works without apache-beam."""

import gzip
import hashlib
import json
import os
import subprocess
import sys

# apache-beam is the `beam` extra, which `make install` installs: a broken install fails this
# module at import instead of skipping its tests.
import apache_beam  # noqa: F401
import pytest

from pipelines import pretraining_data, shard_worker
from pipelines.beam_writer import write_pretraining_data_beam
from pipelines.pretraining_data import main, write_pretraining_data

SPM = "vocab/30k-clean.reconstructed.model"
# Two book slices (260 kB): with 8k-character groups, groups span the two files.
BOOKS = ["corpus/gutenberg/1342-0.txt", "corpus/gutenberg/1661.txt"]
SETTINGS = {"max_seq_length": 128, "num_shards": 3, "group_chars": 1 << 13}
TIMING = ("seconds", "cpu_seconds")


def _hashes(folder):
    names = sorted(n for n in os.listdir(folder) if n.endswith(".tfrecord"))
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in names}


def _arguments(inputs, spm, folder, **settings):
    arguments = ["--input", ",".join(map(str, inputs)), "--spm_model", str(spm)]
    arguments += ["--output_dir", str(folder), "--quiet"]
    for name, value in settings.items():
        arguments += [f"--{name}", str(value)]
    return arguments


def _beam(inputs, spm, folder, mode, **settings):
    """The command line with --runner DirectRunner and two workers; returns stats.json."""
    arguments = _arguments(inputs, spm, folder, **settings)
    arguments += ["--runner", "DirectRunner", "--direct_num_workers=2"]
    arguments += [f"--direct_running_mode={mode}"]
    assert main(arguments) == 0
    return json.loads((folder / "stats.json").read_text())


def _same_stats(local, beam):
    assert {k: v for k, v in local.items() if k not in TIMING} == {
        k: v for k, v in beam.items() if k not in TIMING
    }


@pytest.mark.parametrize(
    "settings, mode",
    [
        ({"sentence_objective": "sop", "dupe_factor": 1}, "multi_processing"),
        ({"sentence_objective": "nsp", "dupe_factor": 2}, "multi_threading"),
        pytest.param(
            {"sentence_objective": "sop", "dupe_factor": 2},
            "multi_threading",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            {"sentence_objective": "nsp", "dupe_factor": 1},
            "multi_processing",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            {"sentence_objective": "none", "packing": "full_sentences", "dupe_factor": 2},
            "multi_threading",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_beam_writes_the_local_writers_bytes(settings, mode, shared_data, tmp_path):
    inputs = [shared_data / book for book in BOOKS]
    local = write_pretraining_data(
        input=[str(p) for p in inputs],
        spm_model=str(shared_data / SPM),
        output_dir=str(tmp_path / "local"),
        progress=False,
        **SETTINGS,
        **settings,
    )
    beam = _beam(inputs, shared_data / SPM, tmp_path / "beam", mode, **SETTINGS, **settings)
    hashes = _hashes(tmp_path / "local")
    assert len(hashes) == 3 and local["examples"] > 400
    assert _hashes(tmp_path / "beam") == hashes
    _same_stats(local, beam)
    assert beam["input"]["files_read"] == 2


def test_bad_input_is_skipped_and_counted_as_locally(shared_data, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    book = (shared_data / BOOKS[1]).read_bytes()
    (corpus / "a_book.txt").write_bytes(book)
    (corpus / "b_binary.txt").write_bytes(b"PK\x03\x04\x00\x00binary")
    (corpus / "c_empty.txt").write_bytes(b"")
    # A BOM, invalid UTF-8 and a giant line inside otherwise good text.
    text = b"\xef\xbb\xbfIt was \xff\xfe fine.\n\n" + b"x" * 1_100_000 + b"\n\n" + book[:50_000]
    (corpus / "d_repaired.txt").write_bytes(text)
    (corpus / "e_corrupt.txt.gz").write_bytes(gzip.compress(book[:200_000])[:30_000])
    settings = {**SETTINGS, "dupe_factor": 1}
    local = write_pretraining_data(
        input=str(corpus / "*"),
        spm_model=str(shared_data / SPM),
        output_dir=str(tmp_path / "local"),
        progress=False,
        **settings,
    )
    beam = _beam(
        [corpus / "*"], shared_data / SPM, tmp_path / "beam", "multi_threading", **settings
    )
    skipped = local["input"]["skipped"]
    assert set(skipped) == {"binary_file", "empty_file", "giant_line", "read_error"}
    assert set(local["input"]["repaired"]) == {"bom", "invalid_utf8"}
    assert _hashes(tmp_path / "beam") == _hashes(tmp_path / "local")
    _same_stats(local, beam)


def test_a_pattern_matching_nothing_is_one_line_on_the_beam_path(shared_data, tmp_path, capsys):
    arguments = _arguments([tmp_path / "nothing-*.txt"], shared_data / SPM, tmp_path / "out")
    assert main([*arguments, "--runner", "DirectRunner"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "nothing-*.txt' matches no file" in error


def test_beam_options_need_a_runner(tmp_path, capsys):
    arguments = _arguments([tmp_path / "a.txt"], tmp_path / "spm.model", tmp_path / "out")
    with pytest.raises(SystemExit) as exit_info:
        main([*arguments, "--direct_num_workers=2"])
    assert exit_info.value.code == 2
    assert "--direct_num_workers=2 (Beam options need --runner)" in capsys.readouterr().err


def test_without_apache_beam_a_runner_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "apache_beam", None)  # import apache_beam -> ImportError
    # As if never imported: Beam's submodules too (else `from apache_beam.io... import` works).
    for name in [n for n in sys.modules if n.startswith("apache_beam.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "pipelines.beam_writer", raising=False)
    monkeypatch.delitem(sys.modules, "pipelines.beam_pipeline", raising=False)
    arguments = _arguments([tmp_path / "a.txt"], tmp_path / "spm.model", tmp_path / "out")
    assert main([*arguments, "--runner", "DirectRunner"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "pip install albert-keras[beam]" in error


@pytest.mark.parametrize("through_command_line", [True, False])
def test_record_makers_keep_freed_memory_when_the_command_line_runs_them(
    through_command_line, shared_data, tmp_path, monkeypatch
):
    """The command line's Beam workers set glibc's malloc as the local workers do; the library
    leaves the calling process's malloc alone unless asked (an in-process runner runs there)."""
    calls = []
    monkeypatch.setattr(shard_worker, "keep_freed_memory", lambda: calls.append(1))
    corpus = tmp_path / "a.txt"
    corpus.write_text("The cat sat on the mat. It was warm.\n\nA dog came by. It barked.\n")
    settings = {"max_seq_length": 32, "dupe_factor": 1}
    if through_command_line:
        arguments = _arguments([corpus], shared_data / SPM, tmp_path / "out", **settings)
        assert main([*arguments, "--runner", "DirectRunner"]) == 0
    else:
        write_pretraining_data_beam(
            input=str(corpus),
            spm_model=str(shared_data / SPM),
            output_dir=str(tmp_path / "out"),
            progress=False,
            **settings,
        )
    assert json.loads((tmp_path / "out" / "stats.json").read_text())["examples"] > 0
    assert (len(calls) > 0) == through_command_line


def test_pipelines_work_without_apache_beam(shared_data, tmp_path):
    # A fresh interpreter where `import apache_beam` fails: the local writer still runs.
    script = (
        "import sys; sys.modules['apache_beam'] = None\n"
        "import pipelines, pipelines.train_vocab, pipelines.documents\n"
        "from pipelines.pretraining_data import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    arguments = _arguments(
        [shared_data / BOOKS[1]], shared_data / SPM, tmp_path, dupe_factor=1, num_workers=1
    )
    subprocess.run(
        [sys.executable, "-c", script, *arguments],
        cwd=os.path.dirname(os.path.dirname(pretraining_data.__file__)),
        check=True,
    )
    assert json.loads((tmp_path / "stats.json").read_text())["examples"] > 50
