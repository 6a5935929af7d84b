"""The training runtime under the jobs: strategies, precision, checkpoints, callbacks, inputs.

The jobs that run on it (`pretrain`, `distill`, `finetune_glue`, `finetune_squad`) live in
`albert_keras.jobs`; the optimizers and schedules in `albert_keras.optimizers`.
"""

from albert_keras.training.precision import choose_precision, in_precision
from albert_keras.training.strategy import get_strategy

__all__ = [
    "choose_precision",
    "get_strategy",
    "in_precision",
]
