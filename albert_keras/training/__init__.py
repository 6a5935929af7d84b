"""Training jobs above the model library: strategies, precision, pretraining, GLUE fine-tuning.

The optimizers and schedules they use live in `albert_keras.optimizers`.
"""

from albert_keras.training.precision import choose_precision, in_precision
from albert_keras.training.pretrain_job import pretrain
from albert_keras.training.strategy import get_strategy

__all__ = [
    "choose_precision",
    "get_strategy",
    "in_precision",
    "pretrain",
]
