"""Prints the project's package-level import graph and checks its dependency rules.

    python tools/import_graph.py            # edges, then "rules hold" (exit 0) or the breaches (exit 1)
    python tools/import_graph.py --mermaid  # the same edges as a Mermaid graph for docs/design.md

Reads the source with `ast` (nothing is imported). A node is a subpackage (`albert_keras.models`,
`pipelines`, ...); an edge A -> B means a module of A imports one of B. Imports inside functions
(loaded on first use) are marked `lazy`. The rules (docs/design.md, "Dependencies"):

- `albert_keras.layers` imports no other package of ours; `albert_keras.optimizers` neither;
- `albert_keras.models` imports only `layers` and `optimizers`, and, on first use only,
  `presets` (`from_preset` of released weights, keras-hub's pattern) and `preprocessing` (a saved
  classifier's preprocessor);
- `pipelines` imports nothing of `albert_keras` (it knows the record format, not the model);
- `albert_keras_cli` imports nothing of ours at module level (so `--help` needs no TensorFlow).
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("albert_keras", "albert_keras_cli", "pipelines")
# package -> the packages of ours it may import (module level and lazily alike).
ALLOWED = {
    "albert_keras.layers": {"albert_keras.layers"},
    "albert_keras.optimizers": {"albert_keras.optimizers"},
    "albert_keras.models": {
        "albert_keras.models",
        "albert_keras.layers",
        "albert_keras.optimizers",
    },
    "pipelines": {"pipelines"},
}
# package -> the packages of ours it may import inside functions only (loaded on first use).
LAZY_ALLOWED = {
    "albert_keras.models": {"albert_keras.presets", "albert_keras.preprocessing"},
}


def node(module: str) -> str | None:
    """The graph node of a dotted module name, or None for a module not of ours."""
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None
    if parts[0] == "albert_keras" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: pathlib.Path) -> list[tuple[str, bool]]:
    """(imported module, lazy) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(body, lazy):
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(statement.body, True)
                continue
            if isinstance(statement, ast.Import):
                found.extend((alias.name, lazy) for alias in statement.names)
            elif isinstance(statement, ast.ImportFrom):
                base = statement.module or ""
                if statement.level:
                    anchor = package.split(".")[: len(package.split(".")) - statement.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                found.append((base, lazy))
                # `from albert_keras import training` names a subpackage.
                found.extend((f"{base}.{alias.name}", lazy) for alias in statement.names)
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and not isinstance(statement, ast.ClassDef):
                    visit(inner, lazy)
            if isinstance(statement, ast.ClassDef):
                visit(statement.body, lazy)

    visit(tree.body, False)
    return found


def graph() -> dict[tuple[str, str], bool]:
    """{(from, to): lazy} over every module of ours; lazy only if every such import is."""
    edges: dict[tuple[str, str], bool] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            source = node(module_name(path))
            for name, lazy in imports(path):
                target = node(name)
                if target is None or target == source:
                    continue
                edges[(source, target)] = edges.get((source, target), True) and lazy
    return edges


def breaches(edges: dict[tuple[str, str], bool]) -> list[str]:
    found = []
    for (source, target), lazy in sorted(edges.items()):
        allowed = ALLOWED.get(source)
        if lazy and target in LAZY_ALLOWED.get(source, ()):
            continue
        if allowed is not None and target not in allowed:
            found.append(f"{source} -> {target}" + (" (lazy)" if lazy else ""))
        if source == "albert_keras_cli" and not lazy:
            found.append(f"{source} -> {target} at module level")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mermaid", action="store_true", help="print a Mermaid graph")
    args = parser.parse_args(argv)
    edges = graph()
    if args.mermaid:
        print("graph LR")
        for (source, target), lazy in sorted(edges.items()):
            arrow = "-.->" if lazy else "-->"
            ids = source.replace(".", "__"), target.replace(".", "__")
            print(f"    {ids[0]}[{source}] {arrow} {ids[1]}[{target}]")
    else:
        for (source, target), lazy in sorted(edges.items()):
            print(f"{source} -> {target}" + ("  (lazy)" if lazy else ""))
    bad = breaches(edges)
    for line in bad:
        print(f"rule broken: {line}", file=sys.stderr)
    if not args.mermaid:
        print("rules hold" if not bad else f"{len(bad)} rule(s) broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
