"""The demo's embedded corpus: prose from the docstrings of the installed Python.

`make demo` must run on a fresh machine with no download, so its text comes from what the install
itself provides: the docstrings of the standard library and of installed packages (Keras, NumPy,
...), read with `ast` (no module is imported). Only prose paragraphs are kept: code examples,
parameter tables and reST directives are dropped.
"""

import ast
import os
import pathlib
import re
import sysconfig

# Packages whose docstrings are mostly English prose; each becomes one source file.
DEFAULT_SOURCES = ("stdlib", "keras", "numpy", "scipy", "sklearn")

_SECTION_HEADER = re.compile(
    r"^(Args|Arguments|Returns|Return|Raises|Yields|Example|Examples|Note|Notes|Parameters|"
    r"Attributes|References|See Also|Warning|Warnings|Call arguments|Input shape|Output shape)"
    r"\s*:?\s*$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z]+")


def _source_root(source: str) -> pathlib.Path | None:
    if source == "stdlib":
        return pathlib.Path(sysconfig.get_paths()["stdlib"])
    root = pathlib.Path(sysconfig.get_paths()["purelib"]) / source
    return root if root.is_dir() else None


def _python_files(root: pathlib.Path, source: str):
    for dirpath, dirnames, filenames in os.walk(root):
        # Tests and vendored third-party code are not the package's own prose.
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in ("test", "tests", "site-packages", "idlelib", "_vendor", "externals")
            and not d.startswith(".")
        )
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield pathlib.Path(dirpath) / name


def _is_prose(paragraph: str) -> bool:
    lines = paragraph.splitlines()
    if _SECTION_HEADER.match(lines[0].strip()) or lines[0].lstrip().startswith((">>>", "..", "-")):
        return False
    # Indented continuation lines mean a code block or a parameter description list.
    if any(line.startswith((" ", "\t")) for line in lines[1:]):
        return False
    text = " ".join(line.strip() for line in lines)
    words = _WORD.findall(text)
    if len(words) < 8 or len(text) < 60 or not text.rstrip().endswith((".", "!", "?")):
        return False
    letters = sum(len(w) for w in words)
    return letters / len(text) > 0.7 and "::" not in text and "`" not in text


def docstring_paragraphs(path: pathlib.Path) -> list[str]:
    """The prose paragraphs of one file's module, class and function docstrings, in order.

    Args:
        path: pathlib.Path. A Python source file; files that do not parse give `[]`.
    """
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return []
    paragraphs = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                paragraphs += [p.strip() for p in re.split(r"\n\s*\n", doc) if p.strip()]
    return [p for p in paragraphs if _is_prose(p)]


def extract_docstring_corpus(
    output_dir: str | os.PathLike,
    sources: tuple[str, ...] = DEFAULT_SOURCES,
    max_megabytes_per_source: float = 1.0,
    heldout_every: int = 10,
) -> dict:
    """Writes `train/<source>.txt` and `heldout/<source>.txt` under `output_dir` (`text` format).

    Paragraphs are separated by blank lines and a module's paragraphs stay together, so
    consecutive paragraphs are a real document for sentence-order prediction. Every
    `heldout_every`-th module goes to `heldout/`, for evaluation on text never trained on.
    Sources that are not installed are skipped.

    Args:
        output_dir: str or path. Created if missing.
        sources: tuple of str. "stdlib" and/or names of installed top-level packages.
        max_megabytes_per_source: float. Stop reading a source past this much text.
        heldout_every: int. One module in this many is held out.

    Returns:
        dict: `train_files`, `heldout_files` (lists of paths) and `sources` (per source:
        `modules`, `paragraphs`, `megabytes`).

    Example:
    >>> corpus = extract_docstring_corpus("demo_output/corpus", sources=("stdlib",))
    >>> corpus["sources"]["stdlib"]["paragraphs"] > 1000
    True
    """
    output_dir = pathlib.Path(output_dir)
    summary = {"train_files": [], "heldout_files": [], "sources": {}}
    seen = set()  # generated modules repeat the same paragraph many times: keep each once
    for source in sources:
        root = _source_root(source)
        if root is None:
            continue
        budget = int(max_megabytes_per_source * 1e6)
        modules, size, count = [], 0, 0
        for path in _python_files(root, source):
            paragraphs = [p for p in docstring_paragraphs(path) if p not in seen]
            seen.update(paragraphs)
            if not paragraphs:
                continue
            modules.append("\n\n".join(paragraphs))
            size += len(modules[-1])
            count += len(paragraphs)
            if size >= budget:
                break
        for split in ("train", "heldout"):
            chosen = [
                text
                for i, text in enumerate(modules)
                if (i % heldout_every == heldout_every - 1) == (split == "heldout")
            ]
            target = output_dir / split / f"{source}.txt"
            _write_atomic(target, "\n\n\n".join(chosen) + "\n")
            summary[f"{split}_files"].append(str(target))
        summary["sources"][source] = {
            "modules": len(modules),
            "paragraphs": count,
            "megabytes": round(size / 1e6, 3),
        }
    if not summary["sources"]:
        raise ValueError(f"none of the sources {sources} is installed")
    return summary


def _write_atomic(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
