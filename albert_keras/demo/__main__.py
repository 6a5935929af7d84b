"""`python -m albert_keras.demo [OUTPUT_DIR]`: the demo at its defaults (`run_demo.DEFAULTS`) on
the embedded corpus, into OUTPUT_DIR (default `demo_output`).

Its flags (your corpus, sizes, steps, `--config`) belong to the command, `albert-keras demo
--help`: the library does not import the command line.
"""

import sys

from albert_keras.demo.run_demo import run_demo


def main(argv: list[str]) -> int:
    """Runs the demo into `argv[0]` (default `demo_output`); returns the exit code."""
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print(
            f"python -m albert_keras.demo: takes only OUTPUT_DIR, got {' '.join(argv)}; "
            "for flags run: albert-keras demo --help",
            file=sys.stderr,
        )
        return 2
    run_demo(argv[0] if argv else "demo_output")
    return 0


sys.exit(main(sys.argv[1:]))
