"""Tiny synthetic pretraining records with a learnable signal, in the record format.

Shared by tests/training and tests/distill (tests/ is on sys.path through tests/conftest.py), so
the records are written in one place; the fixtures that write them stay in those folders'
conftest.py files.
"""

import numpy as np
import tensorflow as tf

SEQ_LENGTH = 32
MAX_PREDICTIONS = 5
VOCABULARY_SIZE = 100
CLS, SEP, MASK, FIRST_ID = 2, 3, 4, 5


def write_synthetic_records(path, num_examples, seed):
    """Writes the record format's features (docs/design.md) for a copying task: segment A repeats one id from the low
    half of the vocabulary and segment B one from the high half, so a masked id is the one its
    segment repeats (MLM) and a swapped pair shows as high ids first (SOP label 1). Learnable
    from the rule, not only by heart: held-out records score as well as training ones."""
    rng = np.random.default_rng(seed)
    labels = []
    half = (FIRST_ID + VOCABULARY_SIZE) // 2
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(num_examples):
            length_a, length_b = rng.integers(4, 13, size=2)
            a = [int(rng.integers(FIRST_ID, half))] * length_a
            b = [int(rng.integers(half, VOCABULARY_SIZE))] * length_b
            swapped = int(rng.integers(2))
            first, second = (b, a) if swapped else (a, b)
            tokens = [CLS, *first, SEP, *second, SEP]
            segments = [0] * (len(first) + 2) + [1] * (len(second) + 1)
            candidates = [i for i, t in enumerate(tokens) if t >= FIRST_ID]
            positions = sorted(rng.choice(candidates, size=MAX_PREDICTIONS - 1, replace=False))
            ids = [tokens[p] for p in positions]
            for p in positions:
                tokens[p] = MASK
            pad = SEQ_LENGTH - len(tokens)
            features = {
                "input_ids": tokens + [0] * pad,
                "input_mask": [1] * len(tokens) + [0] * pad,
                "segment_ids": segments + [0] * pad,
                "token_boundary": [1] * len(tokens) + [0] * pad,
                "masked_lm_positions": [int(p) for p in positions] + [0],
                "masked_lm_ids": ids + [0],
                "next_sentence_labels": [swapped],
            }
            feature = {
                k: tf.train.Feature(int64_list=tf.train.Int64List(value=v))
                for k, v in features.items()
            }
            weights = [1.0] * len(positions) + [0.0]
            feature["masked_lm_weights"] = tf.train.Feature(
                float_list=tf.train.FloatList(value=weights)
            )
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())
            labels.append(swapped)
    return labels
