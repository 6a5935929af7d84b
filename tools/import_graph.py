"""Checks the project's imports: no loop between modules, and no package importing up the stack.

    python tools/import_graph.py             # package edges, loops, upward imports, a summary
    python tools/import_graph.py --mermaid   # the package edges as a Mermaid graph (docs/design.md)
    python tools/import_graph.py --root DIR  # another tree holding the same packages (tests)

Reads the source with `ast` (nothing is imported). Every import of a module of ours counts, at
module level or inside a function (loaded on first use; marked `lazy`), and so does
`importlib.import_module("a literal name")`; `from package import name` counts as an import of
`package.name` where that is a module, else of `package`. Exit 1 on any of:

- a **loop**: modules that import each other, directly or round a circle (each loop is printed
  with its files and one circle through them);
- an **upward import**: a module of package A importing package B where `RULES[A]` does not
  list B (a package of ours without a rule is reported too);
- an import that must be **inside a function** (`INSIDE_FUNCTIONS_ONLY`) made at module level.

The rules form a stack (a test checks they hold no circle), so keeping them keeps the packages
free of loops as well. A node is a subpackage (`albert_keras.models`), a module directly under
`albert_keras` (`albert_keras.version`), the top `albert_keras` itself (its `__init__`), or a
top-level package (`pipelines`, `albert_keras_cli`).
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import sys
from typing import NamedTuple

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = (
    "albert_keras",
    "albert_keras_cli",
    "albert_keras_contracts",
    "albert_keras_settings",
    "pipelines",
)

# === The rules: each package -> the packages of ours it may import ===
# Listed bottom up; a package may import only packages listed above it.
_MODEL_LIBRARY = {"albert_keras.layers", "albert_keras.optimizers", "albert_keras.models"}
_BELOW_TRAINING = _MODEL_LIBRARY | {
    "albert_keras_contracts",
    "albert_keras_settings",
    "pipelines",
    "albert_keras.preset_registry",
    "albert_keras.preprocessing",
    "albert_keras.convert",
    "albert_keras.presets",
    "albert_keras.serving",
    "albert_keras.glue",
    "albert_keras.squad",
    "albert_keras.tagging",
    "albert_keras.multiple_choice",
}
_TASKS = {
    "albert_keras.glue",
    "albert_keras.squad",
    "albert_keras.tagging",
    "albert_keras.multiple_choice",
    "albert_keras.serving",
}
RULES: dict[str, set[str]] = {
    # The contracts every layer shares: the record format and the writer's stats.json, special
    # ids, text normalization, vocabulary identity, atomic writes and output-folder ownership; no
    # model, no TensorFlow at import.
    "albert_keras_contracts": set(),
    # Each job's settings (frozen dataclasses) and the flags generated from them: no TensorFlow.
    "albert_keras_settings": {"albert_keras_contracts"},  # the catalogue's names
    # The data: vocabulary training, the pretraining-data writer (local and Beam), the reader.
    "pipelines": {"albert_keras_contracts", "albert_keras_settings"},
    "albert_keras.version": set(),
    # `from_preset`'s registry: the model library looks loaders up here, `presets` fills it.
    "albert_keras.preset_registry": set(),
    # The model library.
    "albert_keras.layers": {"albert_keras_contracts"},  # the catalogue's sharing modes
    "albert_keras.optimizers": set(),
    "albert_keras.preprocessing": {
        "albert_keras_contracts",
        "pipelines",
        "albert_keras.preset_registry",
    },
    "albert_keras.models": {
        "albert_keras.layers",
        "albert_keras.optimizers",
        "albert_keras.preprocessing",  # a saved classifier's preprocessor classes
        "albert_keras.preset_registry",
        "albert_keras_contracts",
    },
    # Above the models: weights in and out, the tasks, serving.
    "albert_keras.convert": _MODEL_LIBRARY
    | {"albert_keras_contracts", "pipelines", "albert_keras.preprocessing"},
    "albert_keras.presets": _MODEL_LIBRARY
    | {
        "albert_keras_contracts",
        "pipelines",
        "albert_keras.preset_registry",
        "albert_keras.preprocessing",
        "albert_keras.convert",
    },
    # The tasks: their data, encoding (the model library's preprocessing) and metrics.
    "albert_keras.glue": _MODEL_LIBRARY
    | {"albert_keras_contracts", "pipelines", "albert_keras.preprocessing"},
    "albert_keras.squad": _MODEL_LIBRARY
    | {"albert_keras_contracts", "pipelines", "albert_keras.preprocessing"},
    "albert_keras.tagging": _MODEL_LIBRARY
    | {"albert_keras_contracts", "pipelines", "albert_keras.preprocessing"},
    "albert_keras.multiple_choice": _MODEL_LIBRARY
    | {"albert_keras_contracts", "pipelines", "albert_keras.preprocessing"},
    "albert_keras.serving": _MODEL_LIBRARY
    | {
        "albert_keras_contracts",
        "pipelines",
        "albert_keras.preprocessing",
        "albert_keras.glue",
        "albert_keras.squad",
        "albert_keras.tagging",
        "albert_keras.multiple_choice",
    },
    # The training runtime: strategies, precision, checkpoints, callbacks, record inputs; it
    # knows no task (the jobs bring GLUE's and SQuAD's data and metrics).
    "albert_keras.training": _BELOW_TRAINING - _TASKS,
    # The distiller model and its warm start, on the runtime.
    "albert_keras.distill": (_BELOW_TRAINING - _TASKS) | {"albert_keras.training"},
    # The jobs: settings in, a run folder out, on the runtime.
    "albert_keras.jobs": _BELOW_TRAINING | {"albert_keras.training", "albert_keras.distill"},
    # Applications inside the library.
    "albert_keras.study": _BELOW_TRAINING
    | {"albert_keras.training", "albert_keras.distill", "albert_keras.jobs"},
    "albert_keras.demo": _BELOW_TRAINING
    | {"albert_keras.training", "albert_keras.distill", "albert_keras.jobs"},
    # The top of the library: `import albert_keras` (the model library at once, the rest lazily).
    "albert_keras": _BELOW_TRAINING
    | {
        "albert_keras.version",
        "albert_keras.training",
        "albert_keras.distill",
        "albert_keras.jobs",
        "albert_keras.study",
        "albert_keras.demo",
    },
    # The command line stands above everything.
    "albert_keras_cli": _BELOW_TRAINING
    | {
        "albert_keras",
        "albert_keras.version",
        "albert_keras.training",
        "albert_keras.distill",
        "albert_keras.jobs",
        "albert_keras.study",
        "albert_keras.demo",
    },
}
# Package -> the packages it may import inside functions only: `albert-keras --help` imports no
# TensorFlow (`pipelines` loads none at import: its writer's rule), and `import albert_keras`
# loads the model library, not the jobs.
INSIDE_FUNCTIONS_ONLY: dict[str, set[str]] = {
    "albert_keras_cli": RULES["albert_keras_cli"]
    - {"albert_keras_contracts", "pipelines", "albert_keras_settings"},
    "albert_keras": RULES["albert_keras"]
    - _MODEL_LIBRARY
    - {"albert_keras.version", "albert_keras.preset_registry"},
}


class Import(NamedTuple):
    """One import statement's edge: module `source` imports module `target`."""

    source: str
    target: str
    path: str
    line: int
    lazy: bool


def node(module: str) -> str | None:
    """The package (graph node) of a dotted module name, or None for a module not of ours.

    >>> node("albert_keras.models.albert_backbone"), node("keras.layers")
    ('albert_keras.models', None)
    """
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None
    if parts[0] == "albert_keras" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def find_modules(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """{dotted module name: file} for every module of our packages under `root`."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(name: str, modules) -> str | None:
    """The module of ours that importing `name` runs: `name` or its longest known prefix."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return None


def _named_targets(statement, package: str) -> list[str]:
    """The dotted names an import statement (or `importlib.import_module("...")`) asks for."""
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    if isinstance(statement, ast.ImportFrom):
        base = statement.module or ""
        if statement.level:
            anchor = package.split(".")[: len(package.split(".")) - statement.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        return [base] + [f"{base}.{alias.name}" for alias in statement.names]
    call = statement
    name = getattr(call.func, "attr", getattr(call.func, "id", ""))
    if name in ("import_module", "__import__") and call.args:
        argument = call.args[0]
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            return [argument.value]
    return []


def file_imports(module: str, path: pathlib.Path, modules, shown: str = "") -> list[Import]:
    """Every edge from `module` (at `path`, printed as `shown`) to a module of ours, one per
    imported module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    lazy_lines = set()
    for function in (n for n in ast.walk(tree) if isinstance(n, functions)):
        for inner in ast.walk(function):
            if inner is not function:
                lazy_lines.add(id(inner))
    edges = {}
    for statement in ast.walk(tree):
        if not isinstance(statement, (ast.Import, ast.ImportFrom, ast.Call)):
            continue
        names = _named_targets(statement, package)
        if isinstance(statement, ast.ImportFrom):
            # `from a import b`: the module a.b where there is one, else a itself.
            head, *members = names
            names = [m for m in members if m in modules] or [head]
            names += [head] if len(names) < len(members) else []
        for name in names:
            target = _resolve(name, modules)
            if target is None or target == module:
                continue
            lazy = id(statement) in lazy_lines
            key = (target, lazy)
            if key not in edges:
                edges[key] = Import(
                    module, target, shown or path.as_posix(), statement.lineno, lazy
                )
    return sorted(edges.values(), key=lambda edge: (edge.line, edge.target))


def all_imports(root: pathlib.Path = ROOT) -> list[Import]:
    """The import edges of every module of ours under `root`."""
    modules = find_modules(root)
    return [
        edge
        for name, path in modules.items()
        for edge in file_imports(name, path, modules, path.relative_to(root).as_posix())
    ]


# === Loops ===


def loops(edges: list[Import]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (module-level and lazy imports
    alike), each sorted, largest first: every module in one reaches every other."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index, low, stack, on_stack, groups = {}, {}, [], set(), []
    for start in sorted(graph):
        if start in index:
            continue
        # Tarjan's algorithm without recursion: (node, its successors still to visit).
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            current, successors = work[-1]
            following = next(successors, None)
            if following is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[current])
                if low[current] == index[current]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == current:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
            elif following not in index:
                index[following] = low[following] = len(index)
                stack.append(following)
                on_stack.add(following)
                work.append((following, iter(sorted(graph[following]))))
            elif following in on_stack:
                low[current] = min(low[current], index[following])
    return sorted(groups, key=lambda group: (-len(group), group))


def one_circle(group: list[str], edges: list[Import]) -> list[str]:
    """A shortest circle through the group's first module, for reading a loop."""
    inside = set(group)
    graph: dict[str, list[str]] = {}
    for edge in edges:
        if edge.source in inside and edge.target in inside:
            graph.setdefault(edge.source, []).append(edge.target)
    start = group[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for current in frontier:
            for target in sorted(graph.get(current, ())):
                if target == start:
                    return paths[current] + [start]
                if target not in paths:
                    paths[target] = paths[current] + [target]
                    following.append(target)
        frontier = following
    return [start]


# === Rules ===


def breaches(edges: list[Import], rules=None, inside_only=None) -> list[str]:
    """One line per import that breaks a rule: upward, from a package without a rule, or at
    module level where only imports inside functions are allowed."""
    rules = RULES if rules is None else rules
    inside_only = INSIDE_FUNCTIONS_ONLY if inside_only is None else inside_only
    found = []
    for edge in edges:
        source, target = node(edge.source), node(edge.target)
        if source == target:
            continue
        where = f"{edge.path}:{edge.line}: {edge.source} imports {edge.target}"
        where += " (lazy)" if edge.lazy else ""
        if source not in rules:
            found.append(f"{where}: no rule for package {source}")
        elif target not in rules[source]:
            found.append(f"{where}: upward import ({source} may not import {target})")
        elif not edge.lazy and target in inside_only.get(source, ()):
            found.append(f"{where}: only inside a function ({source} imports {target} lazily)")
    return found


def rule_circles(rules=None) -> list[list[str]]:
    """Circles the rules themselves allow (there must be none: the rules are a stack)."""
    rules = RULES if rules is None else rules
    edges = [Import(a, b, "", 0, False) for a, allowed in rules.items() for b in allowed if a != b]
    return loops(edges)


def packages(root: pathlib.Path = ROOT) -> list[str]:
    """The graph nodes (packages) of the tree under `root`."""
    return sorted({node(name) for name in find_modules(root)})


# === Command line ===


def package_edges(edges: list[Import]) -> dict[tuple[str, str], bool]:
    """{(package, package): lazy}; lazy only if every such import is made inside a function."""
    found: dict[tuple[str, str], bool] = {}
    for edge in edges:
        pair = (node(edge.source), node(edge.target))
        if pair[0] != pair[1]:
            found[pair] = found.get(pair, True) and edge.lazy
    return found


def report(root: pathlib.Path, mermaid: bool = False) -> tuple[list[str], list[str], dict]:
    """(lines for stdout, lines for stderr, counts) of the checks on the tree under `root`."""
    edges = all_imports(root)
    modules = find_modules(root)
    out = []
    for (source, target), lazy in sorted(package_edges(edges).items()):
        if mermaid:
            ids = source.replace(".", "__"), target.replace(".", "__")
            out.append(f"    {ids[0]}[{source}] {'-.->' if lazy else '-->'} {ids[1]}[{target}]")
        else:
            out.append(f"{source} -> {target}" + ("  (lazy)" if lazy else ""))
    if mermaid:
        out.insert(0, "graph LR")
    errors = []
    groups = loops(edges)
    for group in groups:
        files = ", ".join(modules[m].relative_to(root).as_posix() for m in group)
        errors.append(f"loop of {len(group)} modules: {' -> '.join(one_circle(group, edges))}")
        errors.append(f"  files: {files}")
    upward = breaches(edges)
    errors.extend(upward)
    errors.extend(f"the rules allow a loop: {' <-> '.join(c)}" for c in rule_circles())
    names = packages(root)
    counts = {
        "loops": len(groups),
        "upward imports": len(upward),
        "packages": len(names),
        "packages with a rule": sum(name in RULES for name in names),
    }
    return out, errors, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mermaid", action="store_true", help="print a Mermaid graph")
    parser.add_argument("--root", type=pathlib.Path, default=ROOT, help="the tree to check")
    args = parser.parse_args(argv)
    out, errors, counts = report(args.root.resolve(), args.mermaid)
    print("\n".join(out))
    for line in errors:
        print(line, file=sys.stderr)
    if not args.mermaid:
        print(
            f"{counts['loops']} loops, {counts['upward imports']} upward imports, "
            f"{counts['packages with a rule']} of {counts['packages']} packages with a rule"
        )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
