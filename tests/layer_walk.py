"""Every layer inside a model, for tests that check a property of each (dtype, LayerNorm, ...).

Keras's own walk, `Layer._flatten_layers`, is private; this one follows the layers a layer holds
in its attributes (directly, or in a list, tuple or dict), as Keras's tracking does.
"""

import keras


def all_layers(layer: keras.layers.Layer) -> list[keras.layers.Layer]:
    """`layer` and every layer it holds, recursively, each once, in a stable (depth-first) order.

    Example:
    >>> [type(l).__name__ for l in all_layers(keras.Sequential([keras.layers.Dense(2)]))]
    ['Sequential', 'Dense']
    """
    seen, order = set(), []

    def visit(value):
        if isinstance(value, keras.layers.Layer):
            if id(value) in seen:
                return
            seen.add(id(value))
            order.append(value)
            for attribute in vars(value).values():
                visit(attribute)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)

    visit(layer)
    return order
