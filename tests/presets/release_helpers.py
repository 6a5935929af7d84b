"""A release-layout tarball written from random weights, like albert_base_v2.tar.gz."""

import tarfile

import keras
import numpy as np
import sentencepiece

from albert_keras.convert import official_from_model, write_tf1_checkpoint
from albert_keras.models import AlbertBackbone, AlbertPretrainer


def train_tiny_sentencepiece(prefix):
    """A real, uncased SentencePiece model with ALBERT's special ids (<pad> 0 ... [MASK] 4)."""
    text = "the cat sat on the mat . a dog ran in the park . my dog is cute . " * 20
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(text.split(" . ")),
        model_prefix=str(prefix),
        vocab_size=48,
        hard_vocab_limit=False,
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        control_symbols=["[CLS]", "[SEP]", "[MASK]"],
        minloglevel=2,
    )
    return prefix.with_suffix(".model")


def tiny_pretrainer(vocabulary_size, seed=7):
    """A small ALBERT with random (seeded) weights, heads included."""
    keras.utils.set_random_seed(seed)
    backbone = AlbertBackbone(
        vocabulary_size=vocabulary_size,
        num_layers=2,
        num_heads=2,
        embedding_dim=8,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=32,
    )
    return AlbertPretrainer(backbone, sentence_objective="sop")


def write_release_tarball(pretrainer, spm_model, archive, folder_name="albert_tiny"):
    """`archive` laid out as the official tarballs: `albert_tiny/{albert_config.json,
    model.ckpt.*, 30k-clean.model}`."""
    staging = archive.parent / f"{archive.name}.staging" / folder_name
    config, weights = official_from_model(pretrainer)
    write_tf1_checkpoint(config, weights, staging)
    (staging / "30k-clean.model").write_bytes(spm_model.read_bytes())
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(staging, arcname=folder_name)
    return archive


def same_weights(model_a, model_b):
    """Whether two models hold the same weights, in order."""
    a, b = model_a.get_weights(), model_b.get_weights()
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
