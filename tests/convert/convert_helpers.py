"""Helpers for the converter tests: a tiny grouped official config, random weights, inputs."""

import numpy as np

from albert_keras.convert.official_format import official_weight_shapes

# L4 with 2 groups of 2 inner blocks: every block of the layout is exercised.
TINY_OFFICIAL_CONFIG = {
    "vocab_size": 50,
    "embedding_size": 8,
    "hidden_size": 16,
    "num_hidden_layers": 4,
    "num_hidden_groups": 2,
    "inner_group_num": 2,
    "num_attention_heads": 2,
    "intermediate_size": 32,
    "max_position_embeddings": 16,
    "type_vocab_size": 2,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
    "initializer_range": 0.02,
    "down_scale_factor": 1,
}


def random_official_weights(config, seed=0):
    """Random weights under the official names; LayerNorm scales near 1 as in trained models."""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in official_weight_shapes(config).items():
        scale = 0.5 if name.endswith(("embeddings", "kernel", "output_weights")) else 0.1
        array = rng.normal(0.0, scale, shape)
        if name.endswith("gamma"):
            array += 1.0
        weights[name] = array.astype(np.float32)
    return weights


def write_tf1_checkpoint_like_official(weights, prefix, extra_bookkeeping=True):
    """Writes variables with exactly these names through tf.compat.v1 and a Saver, as the
    official code does (independent of the package's own writer)."""
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        for name, array in weights.items():
            tf.compat.v1.get_variable(name, initializer=tf.constant(array))
        if extra_bookkeeping:  # what release checkpoints carry beside the weights
            tf.compat.v1.get_variable("global_step", initializer=tf.constant(125000, tf.int64))
            first = min(weights)
            for slot in ("adam_m", "adam_v"):
                tf.compat.v1.get_variable(
                    f"{first}/{slot}", initializer=tf.constant(weights[first])
                )
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, str(prefix))


def sample_inputs(config, batch=2, length=7, predictions=3, seed=1):
    """Token ids, segment ids, a padding mask with padding in one row, and masked positions."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(0, config["vocab_size"], (batch, length)).astype("int32")
    segment_ids = (np.arange(length)[None] >= length // 2).astype("int32").repeat(batch, 0)
    padding_mask = np.ones((batch, length), "int32")
    padding_mask[1, length - 2 :] = 0
    positions = rng.integers(1, length - 2, (batch, predictions)).astype("int32")
    return token_ids, segment_ids, padding_mask, positions


def pretrainer_outputs(pretrainer, config, seed=1):
    """The backbone and head outputs of `pretrainer` on `sample_inputs`, as NumPy arrays."""
    token_ids, segment_ids, padding_mask, positions = sample_inputs(config, seed=seed)
    batch = {
        "input_ids": token_ids,
        "segment_ids": segment_ids,
        "input_mask": padding_mask,
        "masked_lm_positions": positions,
    }
    backbone_out = pretrainer.backbone(
        {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    )
    heads = pretrainer(batch)
    outputs = {name: np.asarray(value) for name, value in {**backbone_out, **heads}.items()}
    return outputs, (token_ids, segment_ids, padding_mask, positions)
