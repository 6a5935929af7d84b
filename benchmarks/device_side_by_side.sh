#!/bin/bash
# Issue 47's accelerator comparison in one call on a lent NVIDIA machine: ours (JAX, and
# TensorFlow where the image has it), keras-hub (JAX) and Hugging Face (PyTorch: bf16 autocast,
# SDPA, torch.compile, where the image has PyTorch), ALBERT-base and -large at 32 x 512 in
# bfloat16, tokens/s and MFU each; a peer the image lacks is named with the reason. Keras and
# keras-hub travel as wheels in .whl/ (see benchmarks/README.md), as for device_train_step.sh.
# Under 8 minutes on an H100 / H200 (each peer <= 240 s, most ~60 s). Log: $OUT/side_by_side.md.
#
#     bash benchmarks/device_side_by_side.sh
set -u
OUT=${OUT:-/tmp/accelerator}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv \
  | tee -a "$OUT/side_by_side.md"
cd benchmarks && timeout 460 python3 accelerator_side_by_side.py "$@" 2>&1 \
  | grep -v -E "^(I|W)[0-9]{4} " | tee -a "$OUT/side_by_side.md"
