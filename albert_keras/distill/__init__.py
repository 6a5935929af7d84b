"""Distillation: a smaller ALBERT trained against a frozen bigger one (DistilBERT's recipe).

`AlbertDistiller` (the model whose `fit` distils) and `warm_start` (a shallower student from the
teacher's layers). The `albert-keras distill` job that trains them is `albert_keras.jobs.distill`.
"""

from albert_keras.distill.albert_distiller import AlbertDistiller
from albert_keras.distill.warm_start import warm_start

__all__ = ["AlbertDistiller", "warm_start"]
