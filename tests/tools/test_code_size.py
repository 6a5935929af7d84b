"""Files small enough to read in one sitting: no module of the packages over 400 lines, no
function over 80 and none taking more than 12 parameters, but today's offenders listed below, each
at its size, which may only shrink.

    python tests/tools/test_code_size.py   # every module and function over the limits, now

A module's size is its number of lines; a function's runs from its `def` line to its last line
(decorators not counted). Methods and nested functions are measured too, named by their
qualified name (`Class.method`, `outer.inner`); a nested function counts in its outer one as
well.

A function's parameters are counted as written: each positional, keyword-only, `*args` and
`**kwargs` counts 1; a first parameter named `self` or `cls` does not. Exempt is the `__init__`
of a Keras class, which mirrors its `get_config()` (a layer's, model's, callback's, optimizer's
arguments are its config): a class is a Keras class when one of its bases, as written, starts
with `keras.` or `keras_hub.`, is a bare `Layer`, `Model`, `Callback`, `Optimizer`, `Loss` or
`LearningRateSchedule` (imported from Keras), or names (its last dotted part) a Keras class of the
packages, by class name in any module (so `SharedEncoder(keras.layers.Layer)` makes
`class Deeper(SharedEncoder)` one too). A mixin such as `AlbertTask` is not one by itself: its
models list `keras.Model` beside it. Dataclass-generated `__init__`s are not in the source, so
not counted. Pure Python (`ast`): nothing of the packages is imported (the package list comes
from `tools/import_graph.py`, itself pure Python).
"""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _packages() -> tuple[str, ...]:
    """The project's packages as `tools/import_graph.py` lists them (the one list of them)."""
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools/import_graph.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool.PACKAGES


PACKAGES = _packages()
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 12
KERAS_PACKAGES = ("keras", "keras_hub")
KERAS_BASE_NAMES = {"Layer", "Model", "Callback", "Optimizer", "Loss", "LearningRateSchedule"}

# === Today's offenders (issue #31) ===
# Each at its size today: the test fails when one grows, and when one shrinks without its entry
# being lowered or removed (the message names the entry and the number), so the lists only shrink.

# None today: the round of issues 42-47's offenders are split (a new one is an error).
MODULES_OVER_LIMIT = {}

FUNCTIONS_OVER_LIMIT = {}

FUNCTIONS_WITH_MANY_PARAMETERS = {}


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


def _parameter_count(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Parameters as written (`*args`, `**kwargs` 1 each), a first `self` or `cls` not counted."""
    arguments = function.args
    positional = [argument.arg for argument in arguments.posonlyargs + arguments.args]
    count = len(positional) + len(arguments.kwonlyargs)
    count += (arguments.vararg is not None) + (arguments.kwarg is not None)
    return count - (positional[:1] in (["self"], ["cls"]))


def _base_names(node: ast.ClassDef) -> list[str]:
    return [ast.unparse(base) for base in node.bases]


def _is_keras_base(base: str, keras_classes: set[str]) -> bool:
    last = base.rsplit(".", 1)[-1]
    return base.split(".")[0] in KERAS_PACKAGES or last in KERAS_BASE_NAMES | keras_classes


def keras_classes(sources: list[str]) -> set[str]:
    """Names of the Keras classes defined in `sources` (see the module docstring)."""
    bases: dict[str, list[str]] = {}
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, []).extend(_base_names(node))
    found: set[str] = set()
    while True:  # our classes subclass one another: repeat until no new one turns up
        more = {name for name, written in bases.items()
                if any(_is_keras_base(base, found) for base in written)}  # fmt: skip
        if more == found:
            return found
        found = more


def parameter_counts(source: str, keras_names: set[str] | None = None) -> dict[str, int]:
    """Qualified name -> parameters, for every function and method in `source` but the
    `__init__` of a Keras class: one of `keras_names` (by default, those `source` defines)."""
    keras_names = keras_classes([source]) if keras_names is None else keras_names
    counts: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                exempt = (
                    child.name == "__init__"
                    and isinstance(node, ast.ClassDef)
                    and node.name in keras_names
                )
                name = prefix + child.name
                if not exempt:
                    counts[name] = max(_parameter_count(child), counts.get(name, 0))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return counts


def measure_parameters(root: pathlib.Path = ROOT) -> dict[str, int]:
    """Parameters of every function (`path::name`) of the packages under `root`."""
    sources = {path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
               for path in module_paths(root)}  # fmt: skip
    keras_names = keras_classes(list(sources.values()))
    return {
        f"{name}::{function}": count
        for name, source in sources.items()
        for function, count in parameter_counts(source, keras_names).items()
    }


def size_problems(measured: dict[str, int], allowed: dict[str, int], limit: int,
                  list_name: str, unit: str = "lines",
                  advice: str = "split it into named parts") -> list[str]:  # fmt: skip
    """One line per breach of `limit` not in `allowed`, and per entry of `allowed` (named
    `list_name`) that is wrong now: grown, smaller than listed, within the limit, or gone.
    `unit` names what is counted; `advice` says how to mend a new breach."""
    problems = []
    for name, size in sorted(measured.items()):
        entry = allowed.get(name)
        if entry is None and size > limit:
            problems.append(f"{name}: {size} {unit}, over {limit}: {advice}")
        elif entry is not None and size > entry:
            problems.append(
                f"{name}: {size} {unit}, grown past the {entry} {list_name} allows: shrink it "
                f"(an entry may only shrink)"
            )
        elif entry is not None and size <= limit:
            problems.append(f"{name}: {size} {unit}, within {limit} now: remove its entry from "
                            f"{list_name}")  # fmt: skip
        elif entry is not None and size < entry:
            problems.append(f"{name}: {size} {unit}: lower its entry in {list_name} from {entry} "
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


PARAMETERS_ADVICE = "pass the object they belong to (a config, a settings class) instead"


def test_no_function_with_over_12_parameters_but_the_listed_ones():
    counts = measure_parameters()
    assert len(counts) > 500, f"found only {len(counts)} functions under {ROOT}"
    problems = size_problems(
        counts, FUNCTIONS_WITH_MANY_PARAMETERS, MAX_PARAMETERS,
        "FUNCTIONS_WITH_MANY_PARAMETERS", "parameters", PARAMETERS_ADVICE,
    )  # fmt: skip
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


def test_parameters_are_counted_as_written_and_keras_constructors_exempt(tmp_path):
    _plant(
        tmp_path,
        "albert_keras/layers/planted_layer.py",
        "import keras\n"
        "class Planted(keras.layers.Layer):\n"
        "    def __init__(self, a, b, *, c, **kwargs): ...\n"
        "    def call(self, inputs, training=None): ...\n",
    )
    source = (
        "from keras.layers import Layer\n"
        "def plain(a, b, /, c, *args, d, e=1, **kwargs):\n"
        "    def inner(self, x): ...\n"
        "class Thing:\n"
        "    def __init__(self, a): ...\n"
        "    @classmethod\n"
        "    def build(cls, a, b): ...\n"
        "    @staticmethod\n"
        "    def pure(a, b): ...\n"
        "class Bare(Layer):\n"
        "    def __init__(self, a, b): ...\n"
        "class Deeper(layers.Planted):\n"  # our Keras class, from another module
        "    def __init__(self, a, b, c): ...\n"
        "    def helper(self, a): ...\n"
        "class Mixin(Thing):\n"
        "    def __init__(self, *args): ...\n"
    )
    _plant(tmp_path, "pipelines/planted.py", source)
    counts = measure_parameters(tmp_path)
    assert counts == {
        "albert_keras/layers/planted_layer.py::Planted.call": 2,
        "pipelines/planted.py::plain": 7,
        "pipelines/planted.py::plain.inner": 1,  # a first `self` is never counted
        "pipelines/planted.py::Thing.__init__": 1,
        "pipelines/planted.py::Thing.build": 2,
        "pipelines/planted.py::Thing.pure": 2,
        "pipelines/planted.py::Deeper.helper": 1,
        "pipelines/planted.py::Mixin.__init__": 1,
    }
    assert keras_classes([source]) == {"Bare"}  # `Planted` is not in this module alone


def test_each_wrong_parameters_entry_is_named_with_what_to_do(tmp_path):
    def with_parameters(count):
        return f"def f({', '.join(f'p{index}' for index in range(count))}): ...\n"

    _plant(tmp_path, "pipelines/new_offender.py", with_parameters(13))
    _plant(tmp_path, "pipelines/grown.py", with_parameters(16))
    _plant(tmp_path, "pipelines/shrunk.py", with_parameters(14))
    _plant(tmp_path, "pipelines/fixed.py", with_parameters(12))
    allowed = {f"pipelines/{name}.py::f": 15 for name in ("grown", "shrunk", "fixed", "deleted")}
    problems = size_problems(
        measure_parameters(tmp_path), allowed, 12, "ALLOWED", "parameters", PARAMETERS_ADVICE
    )
    assert problems == [
        "pipelines/fixed.py::f: 12 parameters, within 12 now: remove its entry from ALLOWED",
        (
            "pipelines/grown.py::f: 16 parameters, grown past the 15 ALLOWED allows: shrink it "
            "(an entry may only shrink)"
        ),
        f"pipelines/new_offender.py::f: 13 parameters, over 12: {PARAMETERS_ADVICE}",
        "pipelines/shrunk.py::f: 14 parameters: lower its entry in ALLOWED from 15 to 14",
        "pipelines/deleted.py::f: no such function now: remove its entry from ALLOWED",
    ]


def _offenders_text() -> str:
    """Today's offenders, written as the three lists above."""
    modules, functions = measure()
    lines = ["MODULES_OVER_LIMIT = {"]
    lines += [f'    "{name}": {size},' for name, size in sorted(modules.items())
              if size > MAX_MODULE_LINES]  # fmt: skip
    lines += ["}", "", "FUNCTIONS_OVER_LIMIT = {"]
    lines += [f'    "{name}": {size},' for name, size in sorted(functions.items())
              if size > MAX_FUNCTION_LINES]  # fmt: skip
    lines += ["}", "", "FUNCTIONS_WITH_MANY_PARAMETERS = {"]
    lines += [f'    "{name}": {count},' for name, count in sorted(measure_parameters().items())
              if count > MAX_PARAMETERS]  # fmt: skip
    return "\n".join([*lines, "}"])


if __name__ == "__main__":
    sys.stdout.write(_offenders_text() + "\n")
