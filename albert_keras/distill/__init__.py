"""Distillation: a smaller ALBERT trained against a frozen bigger one (DistilBERT's recipe).

`AlbertDistiller` (the model whose `fit` distils), `warm_start` (a shallower student from the
teacher's layers) and `distill` (the `albert-keras distill` job: strategies, mixed precision,
checkpoints and exact resume, TensorBoard, `summary.json`).
"""

from albert_keras.distill.albert_distiller import AlbertDistiller
from albert_keras.distill.distill_job import distill
from albert_keras.distill.warm_start import warm_start

__all__ = ["AlbertDistiller", "distill", "warm_start"]
