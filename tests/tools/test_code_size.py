"""Files small enough to read in one sitting: no module of the packages over 400 lines and no
function over 80, but today's offenders listed below, each at its size, which may only shrink.

    python tests/tools/test_code_size.py   # every module and function over the limits, now

A module's size is its number of lines; a function's runs from its `def` line to its last line
(decorators not counted). Methods and nested functions are measured too, named by their
qualified name (`Class.method`, `outer.inner`); a nested function counts in its outer one as
well. Pure Python (`ast`): nothing is imported.
"""

from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("albert_keras", "albert_keras_cli", "albert_keras_settings", "pipelines")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80

# === Today's offenders (issue #31) ===
# Each at its size today: the test fails when one grows, and when one shrinks without its entry
# being lowered or removed (the message names the entry and the number), so the lists only shrink.

MODULES_OVER_LIMIT = {}

FUNCTIONS_OVER_LIMIT = {
    # 24 parameters and 52 lines of docstring before its 41 lines of code.
    "pipelines/record_reader.py::read_pretraining_records": 117,
}


# === Measuring ===


def module_paths(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """Every `.py` file of the packages under `root`, sorted."""
    return sorted(path for package in PACKAGES for path in (root / package).rglob("*.py"))


def function_sizes(source: str) -> dict[str, int]:
    """Qualified name -> lines, for every function and method in `source` (the largest where
    one name is defined twice, as a property's getter and setter)."""
    sizes: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    size = child.end_lineno - child.lineno + 1
                    sizes[name] = max(size, sizes.get(name, 0))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return sizes


def measure(root: pathlib.Path = ROOT) -> tuple[dict[str, int], dict[str, int]]:
    """`(modules, functions)`: lines of every module (by path) and function (`path::name`)."""
    modules, functions = {}, {}
    for path in module_paths(root):
        name = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8")
        modules[name] = len(source.splitlines())
        for function, size in function_sizes(source).items():
            functions[f"{name}::{function}"] = size
    return modules, functions


def size_problems(measured: dict[str, int], allowed: dict[str, int], limit: int,
                  list_name: str) -> list[str]:  # fmt: skip
    """One line per breach of `limit` not in `allowed`, and per entry of `allowed` (named
    `list_name`) that is wrong now: grown, smaller than listed, within the limit, or gone."""
    problems = []
    for name, size in sorted(measured.items()):
        entry = allowed.get(name)
        if entry is None and size > limit:
            problems.append(f"{name}: {size} lines, over {limit}: split it into named parts")
        elif entry is not None and size > entry:
            problems.append(
                f"{name}: {size} lines, grown past the {entry} {list_name} allows: shrink it "
                f"(an entry may only shrink)"
            )
        elif entry is not None and size <= limit:
            problems.append(f"{name}: {size} lines, within {limit} now: remove its entry from "
                            f"{list_name}")  # fmt: skip
        elif entry is not None and size < entry:
            problems.append(f"{name}: {size} lines: lower its entry in {list_name} from {entry} "
                            f"to {size}")  # fmt: skip
    for name in sorted(set(allowed) - set(measured)):
        problems.append(f"{name}: no such {'function' if '::' in name else 'module'} now: "
                        f"remove its entry from {list_name}")  # fmt: skip
    return problems


# === The checks ===


def test_no_module_over_400_lines_but_the_listed_ones():
    modules, _ = measure()
    assert len(modules) > 100, f"found only {len(modules)} modules under {ROOT}"
    problems = size_problems(modules, MODULES_OVER_LIMIT, MAX_MODULE_LINES, "MODULES_OVER_LIMIT")
    assert not problems, "\n".join(["", *problems])


def test_no_function_over_80_lines_but_the_listed_ones():
    _, functions = measure()
    problems = size_problems(
        functions, FUNCTIONS_OVER_LIMIT, MAX_FUNCTION_LINES, "FUNCTIONS_OVER_LIMIT"
    )
    assert not problems, "\n".join(["", *problems])


def _plant(root: pathlib.Path, module: str, source: str) -> None:
    path = root / module
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


def test_sizes_are_counted_from_the_def_line_and_name_methods_and_nested_functions(tmp_path):
    source = (
        "import os\n"
        "\n"
        "@decorated\n"
        "def outer(a,\n"
        "          b):\n"
        "    def inner():\n"
        "        return 1\n"
        "    return inner\n"
        "\n"
        "class Thing:\n"
        "    @property\n"
        "    def value(self):\n"
        "        return 1\n"
        "\n"
        "    @value.setter\n"
        "    def value(self, new):\n"
        "        self.x = new\n"
        "        self.y = new\n"
        "        self.z = new\n"
        "\n"
        "    async def fetch(self):\n"
        "        pass\n"
    )
    _plant(tmp_path, "pipelines/planted.py", source)
    modules, functions = measure(tmp_path)
    assert modules == {"pipelines/planted.py": 22}
    assert functions == {
        "pipelines/planted.py::outer": 5,
        "pipelines/planted.py::outer.inner": 2,
        "pipelines/planted.py::Thing.value": 4,
        "pipelines/planted.py::Thing.fetch": 2,
    }


def test_each_wrong_entry_is_named_with_what_to_do(tmp_path):
    def body(lines):
        return "def f():\n" + "    x = 1\n" * (lines - 2) + "    return x\n"

    _plant(tmp_path, "albert_keras/new_offender.py", body(82))
    _plant(tmp_path, "albert_keras/grown.py", body(90))
    _plant(tmp_path, "albert_keras/shrunk.py", body(85))
    _plant(tmp_path, "albert_keras/fixed.py", body(80))
    _, functions = measure(tmp_path)
    allowed = {
        "albert_keras/grown.py::f": 88,
        "albert_keras/shrunk.py::f": 88,
        "albert_keras/fixed.py::f": 88,
        "albert_keras/deleted.py::f": 88,
        "albert_keras/new_offender.py": 500,  # a module entry, in a functions list: not matched
    }
    assert size_problems(functions, allowed, 80, "ALLOWED") == [
        "albert_keras/fixed.py::f: 80 lines, within 80 now: remove its entry from ALLOWED",
        (
            "albert_keras/grown.py::f: 90 lines, grown past the 88 ALLOWED allows: shrink it "
            "(an entry may only shrink)"
        ),
        "albert_keras/new_offender.py::f: 82 lines, over 80: split it into named parts",
        "albert_keras/shrunk.py::f: 85 lines: lower its entry in ALLOWED from 88 to 85",
        "albert_keras/deleted.py::f: no such function now: remove its entry from ALLOWED",
        "albert_keras/new_offender.py: no such module now: remove its entry from ALLOWED",
    ]
    assert size_problems(functions, {}, 100, "ALLOWED") == []  # every one within a higher limit


def _offenders_text() -> str:
    """Today's offenders, written as the two lists above."""
    modules, functions = measure()
    lines = ["MODULES_OVER_LIMIT = {"]
    lines += [f'    "{name}": {size},' for name, size in sorted(modules.items())
              if size > MAX_MODULE_LINES]  # fmt: skip
    lines += ["}", "", "FUNCTIONS_OVER_LIMIT = {"]
    lines += [f'    "{name}": {size},' for name, size in sorted(functions.items())
              if size > MAX_FUNCTION_LINES]  # fmt: skip
    return "\n".join([*lines, "}"])


if __name__ == "__main__":
    sys.stdout.write(_offenders_text() + "\n")
