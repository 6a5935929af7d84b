"""Architecture presets: the official ALBERT v2 configs, the paper's BERT baselines and a tiny
ALBERT for trying things on a CPU (the catalogue's entries: `albert_keras_contracts.catalogue`
holds them as `ARCHITECTURE_PRESETS`, with any a user registers).

Configs only (no weights). Every preset uses the ALBERT release's 30,000-token SentencePiece
vocabulary: the paper's BERT baselines (Table 1, BERT-base 108M parameters) were trained on the
same vocabulary, not BERT's 30,522 WordPieces, so V = 30000 here too.
"""

_ALBERT = {
    "vocabulary_size": 30000,
    "embedding_dim": 128,
    "num_groups": 1,
    "num_inner_repetitions": 1,
    "sharing": "all",
    "dropout": 0.0,  # the v2 configs drop dropout entirely (paper, section 4.7)
    "max_sequence_length": 512,
    "num_segments": 2,
}

_BERT = {
    "vocabulary_size": 30000,
    "num_groups": 1,
    "num_inner_repetitions": 1,
    "sharing": "none",
    "dropout": 0.1,
    "max_sequence_length": 512,
    "num_segments": 2,
}


def _preset(base, layers, hidden, heads, embedding=None):
    # BERT-style presets have E == H; the FFN is 4H wide in every official config.
    return {
        **base,
        "num_layers": layers,
        "hidden_dim": hidden,
        "num_heads": heads,
        "intermediate_dim": 4 * hidden,
        **({"embedding_dim": embedding} if embedding else {}),
    }


BACKBONE_PRESETS = {
    # The albert_config.json files of the official v2 release (google-research/albert).
    "albert_base": _preset(_ALBERT, layers=12, hidden=768, heads=12),
    "albert_large": _preset(_ALBERT, layers=24, hidden=1024, heads=16),
    "albert_xlarge": _preset(_ALBERT, layers=24, hidden=2048, heads=16),
    "albert_xxlarge": _preset(_ALBERT, layers=12, hidden=4096, heads=64),
    # Not an official config: for trying the workflow on a laptop's CPU in minutes (the demo's
    # model, L2 H128 E64; 2,176,128 parameters at V30000, 512,128 with a 4,000-piece vocabulary).
    "albert_tiny": _preset(_ALBERT, layers=2, hidden=128, heads=2, embedding=64),
    # BERT as the paper's baseline: E == H (no projection), nothing shared, dropout 0.1.
    "bert_base": _preset(_BERT, layers=12, hidden=768, heads=12, embedding=768),
    "bert_large": _preset(_BERT, layers=24, hidden=1024, heads=16, embedding=1024),
}
