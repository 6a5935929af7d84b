#!/bin/bash
# The accelerator row of benchmarks/README.md in one call on a lent NVIDIA machine (JAX there,
# no TensorFlow): the device's own bf16 matmul ceiling, then accelerator_train_step.py at
# ALBERT-base 32 x 512 and at batch 64; with `sizes`, the paper's larger configurations instead
# (flash off alone: it changed nothing at base). Keras and keras-hub travel as wheels in .whl/ (see
# benchmarks/README.md); the log goes to $OUT/accelerator.log.
#
#     bash benchmarks/device_train_step.sh          # base
#     bash benchmarks/device_train_step.sh sizes    # large, xlarge, xxlarge
set -u
OUT=${OUT:-/tmp/accelerator}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD" KERAS_BACKEND=jax PYTHONUNBUFFERED=1
log() { tee -a "$OUT/accelerator.log"; }
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,driver_version --format=csv | log
python3 - <<'PY' 2>&1 | log
import time, jax, jax.numpy as jnp, keras
print("jax", jax.__version__, "keras", keras.__version__, jax.devices())
n = 8192
a, b = (jax.random.normal(jax.random.key(i), (n, n), jnp.bfloat16) for i in (1, 2))
f = jax.jit(lambda a, b: a @ b)
f(a, b).block_until_ready()
start = time.perf_counter()
for _ in range(20):
    out = f(a, b)
out.block_until_ready()
print(f"bf16 matmul {n}^3 on random data: {2 * n**3 * 20 / (time.perf_counter() - start) / 1e12:.0f} TFLOP/s")
PY
bench() {  # seconds, flags...
  timeout "$1" python3 benchmarks/accelerator_train_step.py --mixed_precision mixed_bfloat16 \
    "${@:2}" 2>&1 | grep -v -E "^(I|W)[0-9]{4} " | log
  return "${PIPESTATUS[0]}"
}
# mixed_bfloat16 is what `--mixed_precision auto` picks on a GPU of compute capability >= 8.0;
# auto itself reads TensorFlow, which this machine does not have.
if [ "${1:-}" = sizes ]; then
  for preset_batch in albert_large:32 albert_xlarge:16 albert_xxlarge:8; do
    bench 110 --preset "${preset_batch%:*}" --batch_size "${preset_batch#*:}" --flash off \
      --rounds 2 --steps 10
  done
  exit 0
fi
bench 210 || bench 150 --flash off
bench 150 --batch_size 64 --rounds 2 --steps 20
