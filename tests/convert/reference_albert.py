"""ALBERT's forward pass in plain NumPy, from a dict of arrays with the official TF1 names.

Written from google-research/albert's modeling.py and run_pretraining.py (not from our layers),
so tests can check converted models against an independent computation.
"""

import numpy as np

LAYER_NORM_EPSILON = 1e-12  # tf.contrib.layers.layer_norm's variance_epsilon


def gelu(x):
    # The official code's tanh approximation.
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def layer_norm(x, weights, scope):
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    normed = (x - mean) / np.sqrt(variance + LAYER_NORM_EPSILON)
    return normed * weights[f"{scope}/gamma"] + weights[f"{scope}/beta"]


def dense(x, weights, scope, activation=None):
    y = x @ weights[f"{scope}/kernel"] + weights[f"{scope}/bias"]
    return activation(y) if activation else y


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def attention_ffn_block(x, adder, weights, scope, num_heads):
    batch, length, hidden = x.shape
    head_size = hidden // num_heads

    def heads(name):
        y = dense(x, weights, f"{scope}/attention_1/self/{name}")
        return y.reshape(batch, length, num_heads, head_size).transpose(0, 2, 1, 3)

    q, k, v = heads("query"), heads("key"), heads("value")
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_size) + adder
    context = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
    attention = dense(context, weights, f"{scope}/attention_1/output/dense")
    attention = layer_norm(attention + x, weights, f"{scope}/LayerNorm")
    inner = dense(attention, weights, f"{scope}/ffn_1/intermediate/dense", gelu)
    ffn = dense(inner, weights, f"{scope}/ffn_1/intermediate/output/dense")
    return layer_norm(ffn + attention, weights, f"{scope}/LayerNorm_1")


def albert_forward(weights, config, token_ids, segment_ids, padding_mask, masked_positions=None):
    """Runs the official ALBERT graph: returns sequence, pooled, MLM and sentence logits.

    `config` uses the official albert_config.json keys. MLM logits are computed at
    `masked_positions` (B, P) when given, else at every position.
    """
    w = {name: np.asarray(value, np.float64) for name, value in weights.items()}
    length = token_ids.shape[1]
    x = (
        w["bert/embeddings/word_embeddings"][token_ids]
        + w["bert/embeddings/token_type_embeddings"][segment_ids]
        + w["bert/embeddings/position_embeddings"][:length][None]
    )
    x = layer_norm(x, w, "bert/embeddings/LayerNorm")
    if config["embedding_size"] != config["hidden_size"]:
        x = dense(x, w, "bert/encoder/embedding_hidden_mapping_in")
    # (1 - mask) * -10000 on the keys, broadcast over heads and queries, as the official code.
    adder = (1.0 - padding_mask[:, None, None, :].astype(np.float64)) * -10000.0
    num_layers, num_groups = config["num_hidden_layers"], config["num_hidden_groups"]
    for layer in range(num_layers):
        group = int(layer / num_layers * num_groups)
        for inner in range(config["inner_group_num"]):
            scope = f"bert/encoder/transformer/group_{group}/inner_group_{inner}"
            x = attention_ffn_block(x, adder, w, scope, config["num_attention_heads"])
    sequence = x
    pooled = dense(sequence[:, 0], w, "bert/pooler/dense", np.tanh)

    outputs = {"sequence_output": sequence, "pooled_output": pooled}
    if "cls/predictions/output_bias" in w:
        picked = sequence
        if masked_positions is not None:
            picked = np.take_along_axis(sequence, masked_positions[..., None], axis=1)
        h = dense(picked, w, "cls/predictions/transform/dense", gelu)
        h = layer_norm(h, w, "cls/predictions/transform/LayerNorm")
        table = w["bert/embeddings/word_embeddings"]
        outputs["mlm_logits"] = h @ table.T + w["cls/predictions/output_bias"]
    if "cls/seq_relationship/output_weights" in w:
        outputs["sentence_logits"] = (
            pooled @ w["cls/seq_relationship/output_weights"].T
            + w["cls/seq_relationship/output_bias"]
        )
    return outputs
