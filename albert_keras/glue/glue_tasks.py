"""GLUE's tasks are the catalogue's (`albert_keras_contracts.catalogue`: GLUE's ten, in
`albert_keras_contracts.glue_tasks`, and any a user registers); imported here as before."""

from albert_keras_contracts.catalogue import GLUE_TASKS, get_glue_task, register_task

__all__ = ["GLUE_TASKS", "get_glue_task", "register_task"]
