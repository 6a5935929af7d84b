"""The official ALBERT LAMB step (`lamb_optimizer.py` + `create_optimizer`) in plain NumPy.

Shared by the LAMB tests, in-process (TF) and in a JAX subprocess.
"""

import keras
import numpy as np

# What `Lamb`'s default exclusions make of `tiny_block`'s variables: only the kernels are
# decayed and adapted (bias and LayerNorm are excluded by path).
TINY_BLOCK_FLAGS = [True, False, False, False, True]


def lamb_reference(
    weights,
    gradient_steps,
    learning_rates,
    decays,
    adapts,
    weight_decay=0.01,
    beta_1=0.9,
    beta_2=0.999,
    epsilon=1e-6,
    clip_norm=1.0,
):
    """Runs the official update for each step's gradients; returns the final weights."""
    weights = [np.array(w, np.float64) for w in weights]
    ms = [np.zeros_like(w) for w in weights]
    vs = [np.zeros_like(w) for w in weights]
    for grads, lr in zip(gradient_steps, learning_rates):
        grads = [np.asarray(g, np.float64) for g in grads]
        global_norm = np.sqrt(sum(np.sum(g**2) for g in grads))
        grads = [
            g * clip_norm / max(global_norm, clip_norm) for g in grads
        ]  # tf.clip_by_global_norm
        for i, g in enumerate(grads):
            ms[i] = beta_1 * ms[i] + (1 - beta_1) * g
            vs[i] = beta_2 * vs[i] + (1 - beta_2) * g**2
            update = ms[i] / (np.sqrt(vs[i]) + epsilon)
            if decays[i]:
                update = update + weight_decay * weights[i]
            ratio = 1.0
            if adapts[i]:
                w_norm, u_norm = np.linalg.norm(weights[i]), np.linalg.norm(update)
                ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
            weights[i] = weights[i] - ratio * lr * update
    return weights


def make_problem(seed=0, steps=5):
    """Random gradients for variables shaped like a tiny block; some steps large (clipped)."""
    rng = np.random.default_rng(seed)
    shapes = [(4, 3), (3,), (3,), (3,), (3, 2)]
    scales = [3.0, 0.01, 2.0, 0.05, 1.5]  # global norms from ~0.1 to ~10: clipping on and off
    gradient_steps = [
        [scales[s] * rng.standard_normal(shape) for shape in shapes] for s in range(steps)
    ]
    if steps > 2:
        gradient_steps[2][1] = np.zeros((3,))  # a zero gradient: the update is the decay alone
    return shapes, gradient_steps


def tiny_block():
    """Dense (kernel, bias), a LayerNorm (gamma, beta) and a zero-initialised Dense kernel,
    with non-trivial starting values (LayerNorm's beta starts at 0, gamma at 1)."""
    dense = keras.layers.Dense(3, name="attention_dense")
    norm = keras.layers.LayerNormalization(name="output_layer_norm")
    zero = keras.layers.Dense(2, use_bias=False, kernel_initializer="zeros", name="zero_dense")
    dense.build((None, 4))
    norm.build((None, 3))
    zero.build((None, 3))
    variables = [dense.kernel, dense.bias, norm.gamma, norm.beta, zero.kernel]
    rng = np.random.default_rng(1)
    for variable in variables[:4]:
        variable.assign(rng.standard_normal(variable.shape).astype("float32"))
    return variables


def run_keras(optimizer, variables, gradient_steps):
    """Applies each step's gradients with `optimizer`; returns the final values."""
    for grads in gradient_steps:
        optimizer.apply_gradients(
            [(keras.ops.convert_to_tensor(g, "float32"), v) for g, v in zip(grads, variables)]
        )
    return [keras.ops.convert_to_numpy(v) for v in variables]
