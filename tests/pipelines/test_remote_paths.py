"""Paths with a scheme go through Apache Beam's filesystems: reading documents (plain and .gz),
and the Beam pipeline's input, model and output. A test filesystem `albertfs://` maps onto the
local disk, as `gs://` would onto a bucket."""

import gzip
import hashlib
import os
import shutil

import pytest

# apache-beam is the `beam` extra, which `make install` installs: a broken install fails this
# module at import instead of skipping its tests.
from apache_beam.io.filesystem import FileMetadata
from apache_beam.io.localfilesystem import LocalFileSystem

from pipelines.documents import iter_documents
from pipelines.pretraining_data import write_pretraining_data
from pipelines.read_stats import ReadStats

SPM = "vocab/30k-clean.reconstructed.model"
PREFIX = "albertfs://"


def _local(path):
    return path.removeprefix(PREFIX)


class AlbertTestFileSystem(LocalFileSystem):
    """`albertfs:///abs/path` is the local `/abs/path` (a stand-in for gs:// in tests)."""

    @classmethod
    def scheme(cls):
        return "albertfs"

    def mkdirs(self, path):
        return super().mkdirs(_local(path))

    # `_list` is the abstract method Beam's FileSystem asks a subclass to implement (its public
    # `match` calls it), so overriding it is Beam's extension API, not a private attribute.
    def _list(self, dir_or_prefix):
        for metadata in super()._list(_local(dir_or_prefix)):
            yield FileMetadata(
                PREFIX + metadata.path, metadata.size_in_bytes, metadata.last_updated_in_seconds
            )

    def create(self, path, *args, **kwargs):
        return super().create(_local(path), *args, **kwargs)

    def open(self, path, *args, **kwargs):
        return super().open(_local(path), *args, **kwargs)

    def rename(self, sources, destinations):
        return super().rename(list(map(_local, sources)), list(map(_local, destinations)))

    def exists(self, path):
        return super().exists(_local(path))

    def size(self, path):
        return super().size(_local(path))

    def delete(self, paths):
        return super().delete(list(map(_local, paths)))


@pytest.fixture
def corpus(shared_data, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    book = (shared_data / "corpus/gutenberg/1342-0.txt").read_bytes()  # a 160 kB slice
    (folder / "a.txt").write_bytes(book[:100_000])
    (folder / "b.txt.gz").write_bytes(gzip.compress(book[100_000:]))
    return folder


def test_documents_read_through_beam_filesystems_are_the_local_ones(corpus):
    local_stats, remote_stats = ReadStats(), ReadStats()
    local = list(iter_documents(str(corpus / "*"), stats=local_stats))
    remote = list(iter_documents(f"{PREFIX}{corpus}/*", stats=remote_stats))
    assert len(local) > 10 and remote == local
    assert remote_stats.bytes_read == local_stats.bytes_read and remote_stats.files_read == 2


def test_the_beam_pipeline_reads_and_writes_remote_paths(corpus, shared_data, tmp_path):
    from pipelines.beam_writer import write_pretraining_data_beam

    shutil.copy(shared_data / SPM, tmp_path / "spm.model")
    settings = {"max_seq_length": 128, "dupe_factor": 1, "num_shards": 2, "group_chars": 1 << 15}
    local = write_pretraining_data(
        input=str(corpus / "*"),
        spm_model=str(shared_data / SPM),
        output_dir=str(tmp_path / "local"),
        progress=False,
        **settings,
    )
    remote = write_pretraining_data_beam(
        input=f"{PREFIX}{corpus}/*",
        spm_model=f"{PREFIX}{tmp_path}/spm.model",
        output_dir=f"{PREFIX}{tmp_path}/remote",
        progress=False,
        **settings,
    )
    assert remote["files"] == [f"{PREFIX}{corpus}/a.txt", f"{PREFIX}{corpus}/b.txt.gz"]
    assert remote["examples"] == local["examples"] > 200 and remote["counts"] == local["counts"]
    for name in local["shards"]:
        digests = [
            hashlib.sha256((tmp_path / folder / name).read_bytes()).hexdigest()
            for folder in ("local", "remote")
        ]
        assert digests[0] == digests[1]
    assert sorted(os.listdir(tmp_path / "remote")) == sorted([*local["shards"], "stats.json"])
