"""Gives a pretrained `AlbertPretrainer` more positions, for continued pretraining on longer
sequences (the longer pretraining of docs/squad.md's tiny run).

    python experiments/extend_positions.py MODEL.keras OUT.keras MAX_SEQUENCE_LENGTH

The new position table repeats the learned one (Beltagy et al. 2020, Longformer, Sec. 5: "copy
the 512 position embeddings multiple times"), so every position starts from a trained vector;
all other weights are copied unchanged. `albert-keras pretrain --init_from OUT.keras` then
trains the longer positions on records of the new length.
"""

from __future__ import annotations

import argparse
import sys

import keras
import numpy as np

import albert_keras  # noqa: F401  (registers the serializable classes)
from albert_keras.models import AlbertBackbone, AlbertPretrainer


def extend_positions(model: AlbertPretrainer, length: int) -> AlbertPretrainer:
    """A copy of `model` whose backbone takes `length` positions.

    Args:
        model: AlbertPretrainer. The pretrained model; left unchanged.
        length: int. The new `max_sequence_length`, above the model's.
    """
    config = model.backbone.get_config()
    old = config["max_sequence_length"]
    if length <= old:
        raise ValueError(f"max_sequence_length {length} is not above the model's {old}")
    config["max_sequence_length"] = length
    backbone = AlbertBackbone.from_config(config)
    wider = AlbertPretrainer(backbone, sentence_objective=model.sentence_objective)
    # The paths below the model's own name: Keras numbers a second model's name in one process.
    if _inner_paths(wider) != _inner_paths(model):
        raise ValueError("the wider model's weights do not line up with the source's")
    for new, source in zip(wider.weights, model.weights):
        value = keras.ops.convert_to_numpy(source)
        if new.path.endswith("position_embedding/embeddings"):
            value = np.tile(value, (-(-length // old), 1))[:length]
        new.assign(value)
    return wider


def _inner_paths(model) -> list[str]:
    return [weight.path.split("/", 1)[-1] for weight in model.weights]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="the pretrained AlbertPretrainer (.keras)")
    parser.add_argument("target", help="where to save the wider model (.keras)")
    parser.add_argument("max_sequence_length", type=int, help="the new number of positions")
    args = parser.parse_args(argv)
    try:
        wider = extend_positions(keras.saving.load_model(args.source), args.max_sequence_length)
    except (OSError, ValueError) as error:
        print(f"{args.source}: {error}", file=sys.stderr)
        return 2
    wider.save(args.target)
    print(f"{args.source} -> {args.target}: max_sequence_length {args.max_sequence_length}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
