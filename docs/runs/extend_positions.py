"""Gives a pretrained `AlbertPretrainer` more positions, for continued pretraining on longer
sequences (the SQuAD run in docs/squad.md).

The new position table repeats the learned one (Beltagy et al. 2020, Longformer, Sec. 5: "copy
the 512 position embeddings multiple times"), so every position starts from a trained vector;
all other weights are copied unchanged. `albert-keras pretrain --init_from OUT` then trains the
longer positions on records of the new length.

usage: python docs/runs/extend_positions.py MODEL.keras OUT.keras MAX_SEQUENCE_LENGTH
"""

import sys

import keras
import numpy as np

import albert_keras  # noqa: F401  (registers the serializable classes)
from albert_keras.models import AlbertBackbone, AlbertPretrainer


def extend_positions(model, length: int):
    config = model.backbone.get_config()
    old = config["max_sequence_length"]
    if length <= old:
        raise SystemExit(f"max_sequence_length {length} is not above the model's {old}")
    config["max_sequence_length"] = length
    backbone = AlbertBackbone.from_config(config)
    wider = AlbertPretrainer(backbone, sentence_objective=model.sentence_objective)
    if [w.path for w in wider.weights] != [w.path for w in model.weights]:
        raise SystemExit("the wider model's weights do not line up with the source's")
    for new, source in zip(wider.weights, model.weights):
        value = keras.ops.convert_to_numpy(source)
        if new.path.endswith("position_embedding/embeddings"):
            value = np.tile(value, (-(-length // old), 1))[:length]
        new.assign(value)
    return wider


if __name__ == "__main__":
    source, target, length = sys.argv[1], sys.argv[2], int(sys.argv[3])
    wider = extend_positions(keras.saving.load_model(source), length)
    wider.save(target)
    print(f"{source} -> {target}: max_sequence_length {length}")
