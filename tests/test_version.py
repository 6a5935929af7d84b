"""The version is written once, in `albert_keras/version.py`: the library, the command line and
setup.cfg all read it there, and the command line reads it without importing the library."""

import pathlib
import subprocess
import sys

from setuptools.config.setupcfg import read_configuration

import albert_keras
import albert_keras_cli
from albert_keras import version

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_library_command_line_and_setup_share_one_version():
    metadata = read_configuration(REPO / "setup.cfg")["metadata"]
    assert metadata["version"] == version.__version__
    assert albert_keras.__version__ == version.__version__
    assert albert_keras_cli.__version__ == version.__version__


def test_the_command_line_reads_the_version_without_importing_the_library():
    code = (
        "import sys, albert_keras_cli\n"
        "print(albert_keras_cli.__version__, sorted(m for m in sys.modules\n"
        "      if m.split('.')[0] in ('albert_keras', 'keras', 'tensorflow')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=REPO
    )
    assert result.stdout.split() == [version.__version__, "[]"]
