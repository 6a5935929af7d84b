"""`GlueTask` and `TsvLayout` live with the catalogue (`albert_keras_contracts.glue_task`), so
the settings and the command line know the tasks without TensorFlow; imported here as before."""

from albert_keras_contracts.glue_task import GlueTask, TsvLayout

__all__ = ["GlueTask", "TsvLayout"]
