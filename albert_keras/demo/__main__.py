import sys

from albert_keras.cli import main

sys.exit(main(["demo", *sys.argv[1:]]))
