"""`SentencePieceEncoder.encode` on batches of a writer worker's size: SentencePiece's own ids,
and a heap that stays small (each worker process would otherwise fault its pages in)."""

import random
import subprocess
import sys

import numpy as np
import pytest
import sentencepiece as spm

import pipelines
from pipelines.tokenization import _ENCODE_SENTENCES, SentencePieceEncoder

SPM = "vocab/30k-clean.reconstructed.model"
REPO_ROOT = pipelines.__file__.rsplit("/pipelines/", 1)[0]
WORDS = [
    "the", "cat", "sat", "on", "a", "mat", "while", "Ælfred’s", "naïve", "dog", "ran", "past",
    "42", "crème", "brûlée", "stalls",
]  # fmt: skip


def _sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(1, 30))) for _ in range(count)]


def test_a_batch_of_several_pieces_gives_sentencepieces_ids(shared_data):
    model = str(shared_data / SPM)
    sentences = _sentences(2 * _ENCODE_SENTENCES + 100, seed=0)
    # Empty sentences on both sides of each piece boundary: no id moves across it.
    for boundary in (_ENCODE_SENTENCES, 2 * _ENCODE_SENTENCES):
        sentences[boundary - 1] = sentences[boundary] = ""
    encoder = SentencePieceEncoder(model)
    ids, lengths = encoder.encode(sentences)
    expected = spm.SentencePieceProcessor(model_file=model).encode(encoder.preprocess(sentences))
    assert lengths.tolist() == [len(e) for e in expected]
    assert ids.tolist() == [i for e in expected for i in e]
    assert ids.dtype == lengths.dtype == np.int32
    assert lengths[_ENCODE_SENTENCES - 1] == lengths[_ENCODE_SENTENCES] == 0


_FAULTS_CHECK = """
import random, resource, sys
from pipelines.shard_worker import keep_freed_memory
from pipelines.tokenization import SentencePieceEncoder
keep_freed_memory()  # as in a writer worker
encoder = SentencePieceEncoder(sys.argv[1])
rng = random.Random(0)
words = sys.argv[2].split()
sentences = [" ".join(rng.choices(words, k=rng.randint(1, 30))) for _ in range(20_000)]
encoder.encode(sentences[:100])  # the encoder's own first-call memory
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
ids, _ = encoder.encode(sentences)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, ids.size)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc settings, Linux's counts")
def test_encoding_a_workers_batch_faults_in_few_pages(shared_data):
    """A worker's batch (20k sentences, 464k ids) as one list of SentencePiece's Python ints
    took ~20 MB of fresh heap (5,156 page faults here, paid by each worker process); encoded
    piece by piece it takes the id arrays (2 x 1.9 MB) and one piece's lists: 1,263."""
    command = [sys.executable, "-c", _FAULTS_CHECK, str(shared_data / SPM), " ".join(WORDS)]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    faults, num_ids = map(int, result.stdout.split())
    assert num_ids == 464_318
    assert faults < 2_500
