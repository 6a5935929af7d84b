"""The demo's embedded corpus: prose from the docstrings and the reference of the installed Python.

`make demo` must run on a fresh machine with no download, so its text comes from what the install
itself provides: the docstrings of the standard library and of installed packages (Keras, NumPy,
...), read with `ast` (no module is imported), and the Python language reference that ships with
the standard library (`pydoc_data.topics`, the text `help()` shows; PSF license, as the rest of
the standard library). Only prose paragraphs are kept: code examples, grammar rules, parameter
tables and reST directives are dropped.

Each docstring (or reference topic) is written as one paragraph, its prose paragraphs joined, so
with `paragraphs_per_document=1` the sentence-order task pairs sentences of one docstring, which
follow each other (the docstrings of one module, one after the other, do not).
"""

import ast
import os
import pathlib
import re
import sysconfig
import time

# Packages whose docstrings are mostly English prose, and the language reference
# ("reference"); each becomes one source file.
DEFAULT_SOURCES = ("stdlib", "keras", "numpy", "scipy", "sklearn", "reference")
REFERENCE = "reference"

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
    if lines[0][:1].isspace():  # an indented block: code or a grammar rule
        return False
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
    return [p for paragraphs in _docstring_paragraphs(path) for p in paragraphs if _is_prose(p)]


def docstrings(path: pathlib.Path) -> list[str]:
    """One line of prose per docstring of the file (its prose paragraphs joined), in order.

    Args:
        path: pathlib.Path. A Python source file; files that do not parse give `[]`.
    """
    texts = [_prose_line(paragraphs) for paragraphs in _docstring_paragraphs(path)]
    return [text for text in texts if text]


def _docstring_paragraphs(path: pathlib.Path) -> list[list[str]]:
    """Each module, class and function docstring of the file as its list of paragraphs."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                found.append([p.strip() for p in re.split(r"\n\s*\n", doc) if p.strip()])
    return found


def reference_topics() -> list[str]:
    """One line of prose per topic of the Python language reference (`pydoc_data.topics`)."""
    from pydoc_data.topics import topics

    texts = [_prose_line(re.split(r"\n\s*\n", topics[key])) for key in sorted(topics)]
    return [text for text in texts if text]


def _prose_line(paragraphs: list[str]) -> str:
    kept = [p.strip("\n") for p in paragraphs if p.strip() and _is_prose(p.strip("\n"))]
    return " ".join(" ".join(line.strip() for line in p.splitlines()) for p in kept)


def extract_docstring_corpus(
    output_dir: str | os.PathLike,
    sources: tuple[str, ...] = DEFAULT_SOURCES,
    max_megabytes_per_source: float = 1.0,
    heldout_every: int = 10,
    log=None,
) -> dict:
    """Writes `train/<source>.txt` and `heldout/<source>.txt` under `output_dir` (`text` format).

    Each docstring (each reference topic) is one paragraph, paragraphs are separated by blank
    lines and a module's docstrings stay together in order. Every `heldout_every`-th module (or
    topic) goes to `heldout/`, for evaluation on text never trained on. Sources that are not
    installed are skipped.

    Args:
        output_dir: str or path. Created if missing.
        sources: tuple of str. "stdlib", "reference" and/or names of installed top-level
            packages.
        max_megabytes_per_source: float. Stop reading a source past this much text.
        heldout_every: int. One module in this many is held out.
        log: callable or None. Called with a progress line before and after each source
            (reading the standard library's modules takes a minute on a slow machine).

    Returns:
        dict: `train_files`, `heldout_files` (lists of paths) and `sources` (per source:
        `modules`, `paragraphs` (docstrings or topics), `megabytes`).

    Example:
    >>> corpus = extract_docstring_corpus("demo_output/corpus", sources=("stdlib",),
    ...                                   max_megabytes_per_source=0.05)
    >>> corpus["sources"]["stdlib"]["paragraphs"] > 100
    True
    """
    output_dir = pathlib.Path(output_dir)
    summary = {"train_files": [], "heldout_files": [], "sources": {}}
    seen = set()  # generated modules repeat the same docstring many times: keep each once
    say = log or (lambda line: None)
    for source in sources:
        say(f"corpus: reading {source} (up to {max_megabytes_per_source:g} MB of prose)")
        budget = int(max_megabytes_per_source * 1e6)
        modules, size, count = [], 0, 0
        said = time.monotonic()
        for texts in _modules(source):
            if time.monotonic() - said > 10:  # a big package takes a minute on a busy machine
                say(f"corpus: {source}: {len(modules)} modules read, {size / 1e6:.2f} MB so far")
                said = time.monotonic()
            texts = [t for t in texts if t not in seen]
            seen.update(texts)
            if not texts:
                continue
            modules.append("\n\n".join(texts))
            size += len(modules[-1])
            count += len(texts)
            if size >= budget:
                break
        if not modules:
            continue
        for split in ("train", "heldout"):
            chosen = [
                text
                for i, text in enumerate(modules)
                if (i % heldout_every == heldout_every - 1) == (split == "heldout")
            ]
            target = output_dir / split / f"{source}.txt"
            _write_atomic(target, "\n\n".join(chosen) + "\n")
            summary[f"{split}_files"].append(str(target))
        summary["sources"][source] = {
            "modules": len(modules),
            "paragraphs": count,
            "megabytes": round(size / 1e6, 3),
        }
        say(
            f"corpus: {source}: {count} paragraphs from {len(modules)} modules, {size / 1e6:.2f} MB"
        )
    if not summary["sources"]:
        raise ValueError(f"none of the sources {sources} is installed")
    return summary


def _modules(source: str):
    """Per module of `source` (per topic of the reference), its docstrings as lines of prose."""
    if source == REFERENCE:
        for topic in reference_topics():
            yield [topic]
        return
    root = _source_root(source)
    if root is not None:
        for path in _python_files(root, source):
            yield docstrings(path)


def _write_atomic(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
