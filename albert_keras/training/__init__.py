"""Training: the paper's LAMB, the official fine-tuning AdamWeightDecay, the learning-rate
schedule, strategies, and the pretraining job."""

from albert_keras.training.adam_weight_decay import AdamWeightDecay
from albert_keras.training.lamb import Lamb
from albert_keras.training.pretrain_job import pretrain
from albert_keras.training.strategy import get_strategy
from albert_keras.training.warmup_linear_decay import WarmupLinearDecay

__all__ = ["AdamWeightDecay", "Lamb", "WarmupLinearDecay", "get_strategy", "pretrain"]
