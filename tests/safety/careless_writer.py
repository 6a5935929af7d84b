"""A command that does what the suite exists to catch: `python -m careless_writer OUT` empties
OUT and writes `model.keras` into it, exit 0 (tests/safety/test_safety_harness.py)."""

import os
import shutil
import sys

if __name__ == "__main__":
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.keras"), "wb") as file:
        file.write(b"overwritten")
