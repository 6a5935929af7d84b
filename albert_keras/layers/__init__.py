"""ALBERT's layers: the factorized embedding, the transformer block halves, the shared stack."""

from albert_keras.layers.answerability_span_head import AnswerabilitySpanHead
from albert_keras.layers.factorized_embedding import FactorizedEmbedding
from albert_keras.layers.fast_layer_normalization import FastLayerNormalization
from albert_keras.layers.feed_forward_block import FeedForwardBlock
from albert_keras.layers.self_attention_block import SelfAttentionBlock
from albert_keras.layers.shared_encoder import SHARING_MODES, SharedEncoder
from albert_keras.layers.tied_masked_lm_head import TiedMaskedLMHead

__all__ = [
    "SHARING_MODES",
    "AnswerabilitySpanHead",
    "FactorizedEmbedding",
    "FastLayerNormalization",
    "FeedForwardBlock",
    "SelfAttentionBlock",
    "SharedEncoder",
    "TiedMaskedLMHead",
]
