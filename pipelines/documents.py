"""Reads raw text files into documents (lists of sentences) for the vocabulary and the records.

Two input formats:
- `sentences`: the official ALBERT/BERT input. One sentence per line, a blank line between
  documents.
- `text`: real prose. Hard-wrapped lines are joined into paragraphs at blank lines, paragraphs
  are split into sentences after `.`, `!` or `?` followed by whitespace and a capital or a double
  quote, and a document is up to `paragraphs_per_document` paragraphs of one file. This is how
  `../shared/data/reference/gutenberg_sentences.txt` was made from the books (identical output,
  except that we drop the UTF-8 byte-order mark it kept).

Files are read in 4 MiB blocks that end at a line boundary: memory holds a block and the
document being built, whatever the file size. A run of lines with no blank line longer than
`_MAX_RUN_CHARS` (16M characters) is cut there at a line break, and a `text` document is closed
once it holds that many characters: a document longer than memory is streamed as pieces, never
loaded whole (real prose never comes near the limit, so its documents are unchanged). Paths with
a scheme (`gs://`, ...) are read through Apache Beam's filesystems (`pipelines.filesystems`).
Bad input never stops the run: binary files (a NUL byte), empty files, unreadable files
and giant lines are skipped, a BOM is dropped and invalid UTF-8 is replaced; each is counted per
file in a `ReadStats`.

Work splits across processes by file: `list_input_files` gives every process the same sorted
list, and each reads its share with `iter_file_documents`.
"""

from __future__ import annotations

import glob
import logging
import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator

from albert_keras_settings.choices import INPUT_FORMATS
from pipelines import filesystems
from pipelines.read_stats import ReadStats

# A line longer than this is dropped (and counted): real prose never has one, while a minified
# or binary-ish blob could otherwise make one sentence of hundreds of MB.
DEFAULT_MAX_LINE_CHARS = 1_000_000

# Whitespace after `.`, `!` or `?` and before an ASCII capital or a double quote (straight or
# curly): the rule that made the reference file. Abbreviations ("Mr. Bennet") split too; that is
# the reference's behaviour, kept so our sentences match it.
_SENTENCE_BOUNDARIES = [
    (re.compile(re.escape(mark) + r"\s+(?=[A-Z\"\u201c])"), mark + "\0") for mark in ".!?"
]
_BLANK_LINES = re.compile(r"\n\n+")

_BLOCK_BYTES = 1 << 22
# Longest run of lines without a blank one kept whole (a paragraph of `text`, a document of
# `sentences`), and the most characters a `text` document gathers.
_MAX_RUN_CHARS = 1 << 24
_UTF8_BOM = b"\xef\xbb\xbf"
_REPLACEMENT_UTF8 = "\ufffd".encode()


def list_input_files(patterns: str | Iterable[str]) -> list[str]:
    """Expands glob patterns to a sorted, de-duplicated list of files.

    Args:
        patterns: str or list of str. Glob patterns (`**` recurses); a string may hold several
            separated by commas, as the official script's `--input_file`.

    Returns:
        The matching files (directories left out), sorted, so every process sees the same order.
        Symlink loops and dangling links are kept: reading skips them as `read_error`, counted.

    Raises:
        FileNotFoundError: naming the first pattern that matches no file.

    Example:
    >>> import gzip
    >>> os.makedirs("extra")
    >>> with gzip.open("extra/c.txt.gz", "wt") as f:
    ...     _ = f.write("One more sentence.\\n")
    >>> list_input_files("corpus/*.txt,extra/*.txt.gz")
    ['corpus/a.txt', 'corpus/b.txt', 'extra/c.txt.gz']
    """
    if isinstance(patterns, str):
        patterns = [patterns]
    files = set()
    for pattern in (p.strip() for text in patterns for p in _split_patterns(text)):
        if not pattern:
            continue
        if filesystems.is_remote(pattern):
            matched = list(filesystems.match_remote(pattern))
            if not matched:
                raise FileNotFoundError(f"input pattern {pattern!r} matches no file")
            files.update(matched)
            continue
        if os.path.isfile(pattern):
            # An existing name is taken as it is, even if it holds glob characters ("[1]").
            files.add(pattern)
            continue
        matched = [
            path
            for path in glob.glob(os.path.expanduser(pattern), recursive=True)
            if os.path.isfile(path) or _is_unresolvable_link(path)
        ]
        if not matched and os.path.isdir(os.path.expanduser(pattern)):
            # A folder where files are expected: said so, with the glob that reads it.
            raise ValueError(
                f"input {pattern!r} is a folder; give a glob such as "
                f"'{os.path.join(pattern, '*.txt')}'"
            )
        if not matched:
            raise FileNotFoundError(f"input pattern {pattern!r} matches no file")
        files.update(matched)
    if not files:
        raise FileNotFoundError(f"no input pattern given in {list(patterns)!r}")
    return sorted(files)


def _is_unresolvable_link(path: str) -> bool:
    """A symlink loop or a dangling link: listed, so that reading skips and counts it."""
    return os.path.islink(path) and not os.path.exists(path)


def _split_patterns(text: str) -> list[str]:
    # An existing file whose name holds a comma is one name, not two patterns.
    return [text] if os.path.isfile(text) else text.split(",")


def iter_documents(
    file_patterns: str | Iterable[str],
    input_format: str = "text",
    *,
    paragraphs_per_document: int = 20,
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
    stats: ReadStats | None = None,
) -> Iterator[list[str]]:
    """Yields the documents of every file matching `file_patterns`, file after file.

    Args:
        file_patterns: str or list of str. See `list_input_files`.
        input_format: str. `"text"` (prose) or `"sentences"` (one sentence per line).
        paragraphs_per_document: int. Paragraphs per document in the `text` format.
        max_line_chars: int. Longer lines are skipped and counted as `giant_line`.
        stats: `ReadStats` or None. Filled in while reading.

    Yields:
        A document: a non-empty list of non-empty sentences.

    Example:
    >>> stats = ReadStats()
    >>> documents = list(iter_documents("corpus/*.txt", stats=stats))
    >>> len(documents), stats.to_dict()["files_read"]
    (2, 2)
    >>> documents[0][:2]
    ['The cat sat on the mat.', 'We ran across the blue sky.']
    """
    _check_arguments(input_format, paragraphs_per_document, max_line_chars)
    for path in list_input_files(file_patterns):
        yield from iter_file_documents(
            path,
            input_format,
            paragraphs_per_document=paragraphs_per_document,
            max_line_chars=max_line_chars,
            stats=stats,
        )


def iter_file_documents(
    path: str,
    input_format: str = "text",
    *,
    paragraphs_per_document: int = 20,
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS,
    stats: ReadStats | None = None,
) -> Iterator[list[str]]:
    """Yields the documents of one file (plain, or gzip when the name ends in `.gz`).

    Args: as `iter_documents`, with `path` a single file.

    Example:
    >>> import gzip
    >>> with gzip.open("book.txt.gz", "wt") as f:
    ...     _ = f.write("Chapter 1\\n\\nIt is a truth universally acknowledged. It rained.\\n")
    >>> next(iter_file_documents("book.txt.gz", "text"))
    ['Chapter 1', 'It is a truth universally acknowledged.', 'It rained.']
    """
    _check_arguments(input_format, paragraphs_per_document, max_line_chars)
    if not filesystems.is_file(path) and not _is_unresolvable_link(path):
        raise FileNotFoundError(f"input file {path!r} does not exist")
    stats = stats if stats is not None else ReadStats()
    if input_format == "sentences":
        blocks = _iter_line_blocks(path, max_line_chars, str.strip, stats)
        documents = _sentence_documents(_iter_chunks(blocks))
    else:
        blocks = _iter_line_blocks(path, max_line_chars, str.rstrip, stats)
        documents = _text_documents(_iter_chunks(blocks), paragraphs_per_document)
    yielded = 0
    try:
        for document in documents:
            yielded += 1
            stats.documents += 1
            stats.sentences += len(document)
            yield document
    except _SkipFile as skip:
        # Documents already yielded stay (only possible when the trouble is past the first block).
        stats.skip(skip.reason, path)
        return
    if yielded:
        stats.files_read += 1
    else:
        stats.skip("empty_file", path)


def split_sentences(paragraph: str) -> list[str]:
    """Splits one paragraph (a single line of text) into sentences, as the `text` format does.

    Example:
    >>> split_sentences("It rained. “Again?” she asked. No.")
    ['It rained.', '“Again?” she asked.', 'No.']
    """
    paragraph = paragraph.strip()
    return _split_paragraphs([paragraph]) if paragraph else []


def _split_paragraphs(paragraphs: list[str]) -> list[str]:
    """The sentences of stripped, non-empty paragraphs, in order."""
    # One pass per punctuation mark over the whole document: a pattern that starts with a
    # literal is scanned in C at GB/s, where one `[.!?]` class (or a look-behind) runs at
    # 30-60 MB/s. NUL marks the cuts: no text that reaches here holds one (binary files do).
    text = "\0".join(paragraphs)
    for boundary, mark in _SENTENCE_BOUNDARIES:
        text = boundary.sub(mark, text)
    return text.split("\0")


def _check_arguments(input_format: str, paragraphs_per_document: int, max_line_chars: int) -> None:
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"input_format={input_format!r}; expected one of {INPUT_FORMATS}")
    if paragraphs_per_document < 1:
        raise ValueError(f"paragraphs_per_document={paragraphs_per_document} must be >= 1")
    if max_line_chars < 1:
        raise ValueError(f"max_line_chars={max_line_chars} must be >= 1")


def _sentence_documents(chunks: Iterator[str]) -> Iterator[list[str]]:
    # As the official create_pretraining_data.py: each line stripped, blank lines end a document.
    for chunk in chunks:
        chunk = chunk.strip("\n")
        if chunk:
            yield chunk.split("\n")


def _text_documents(chunks: Iterator[str], paragraphs_per_document: int) -> Iterator[list[str]]:
    paragraphs, size = [], 0
    for chunk in chunks:
        # Hard-wrapped lines joined by one space; a line's leading whitespace stays inside the
        # paragraph (only trailing whitespace was stripped), as in the reference file.
        paragraph = chunk.replace("\n", " ").strip()
        if paragraph:
            paragraphs.append(paragraph)
            size += len(paragraph)
            if len(paragraphs) == paragraphs_per_document or size >= _MAX_RUN_CHARS:
                yield _split_paragraphs(paragraphs)
                paragraphs, size = [], 0
    if paragraphs:
        yield _split_paragraphs(paragraphs)


def _iter_chunks(blocks: Iterator[str]) -> Iterator[str]:
    """Cuts blocks of lines at blank lines: yields each run of lines between them (some empty).

    Every line of a block ends with "\n" and blank lines are empty, so "\n\n" is a break; a run
    spanning blocks is kept as pieces and joined once (no re-scan, no quadratic copying).
    """
    pending, pending_chars = [], 0
    for text in blocks:
        # The previous block's last line break, to see a break that straddles two blocks.
        head = "\n" if pending and pending[-1].endswith("\n") else ""
        parts = _BLANK_LINES.split(head + text)
        pending.append(parts[0][len(head) :])
        pending_chars += len(pending[-1])
        if len(parts) > 1:
            yield "".join(pending)
            yield from parts[1:-1]
            pending, pending_chars = [parts[-1]], len(parts[-1])
        elif pending_chars >= _MAX_RUN_CHARS:
            # A run longer than memory should hold: cut it here (blocks end at a line break).
            yield "".join(pending)
            pending, pending_chars = [], 0
    if pending:
        yield "".join(pending)


class _SkipFile(Exception):
    """Raised while reading a file that must be skipped from there on."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _iter_line_blocks(
    path: str, max_line_chars: int, strip: Callable[[str], str], stats: ReadStats
) -> Iterator[str]:
    """Yields blocks of `path` as text whose lines went through `strip` and each end in "\n"."""
    for text in _iter_text_blocks(path, max_line_chars, stats):
        # Whole-block C calls (splitlines, map, join): no per-character or per-line Python.
        lines = text.splitlines()
        if max(map(len, lines), default=0) > max_line_chars:
            kept = [line for line in lines if len(line) <= max_line_chars]
            stats.skip("giant_line", path, len(lines) - len(kept))
            lines = kept
        lines.append("")
        yield "\n".join(map(strip, lines))


def _iter_text_blocks(path: str, max_line_chars: int, stats: ReadStats) -> Iterator[str]:
    """Yields decoded blocks of `path` that each end at a line break."""
    # A line held over between blocks is dropped past this many bytes (UTF-8 is <= 4 per char).
    max_carry = 4 * max_line_chars
    carry, dropping, first = b"", False, True
    try:
        with filesystems.open_input(path) as f:
            while raw := f.read(_BLOCK_BYTES):
                stats.bytes_read += len(raw)
                if b"\0" in raw:
                    # Text never holds NUL (UTF-16 and binary files do): skip the file.
                    raise _SkipFile("binary_file")
                if first:
                    first = False
                    if raw.startswith(_UTF8_BOM):
                        raw = raw[len(_UTF8_BOM) :]
                        stats.repair("bom", path)
                if dropping:
                    # The rest of a giant line: drop up to its end.
                    end = _first_line_end(raw)
                    if end < 0:
                        continue
                    raw, dropping = raw[end:], False
                data = carry + raw
                end = max(_last_line_end(data), 0)
                block, carry = data[:end], data[end:]
                if len(carry) > max_carry:
                    stats.skip("giant_line", path)
                    carry, dropping = b"", True
                if block:
                    yield _decode(block, path, stats)
    except (OSError, EOFError, zlib.error) as error:
        # A corrupt gzip stream or an unreadable file.
        logging.getLogger(__name__).warning("skipping the rest of %s: %s", path, error)
        raise _SkipFile("read_error") from error
    if carry and not dropping:
        yield _decode(carry, path, stats)


def _last_line_end(data: bytes) -> int:
    """The index just past the last line break in `data`, or -1."""
    end = data.rfind(b"\n")
    if end < 0:
        # Classic Mac files end lines with a lone CR. A CR in the last byte may be the first
        # half of a CRLF cut by the block, so it is left for the next block.
        end = data.rfind(b"\r", 0, len(data) - 1)
    return end + 1 if end >= 0 else -1


def _first_line_end(data: bytes) -> int:
    """The index just past the first line break (LF, CRLF or a lone CR) in `data`, or -1."""
    lf, cr = data.find(b"\n"), data.find(b"\r", 0, len(data) - 1)
    if cr >= 0 and (lf < 0 or cr < lf):
        return cr + 2 if lf == cr + 1 else cr + 1
    return lf + 1 if lf >= 0 else -1


def _decode(block: bytes, path: str, stats: ReadStats) -> str:
    try:
        return block.decode("utf-8")
    except UnicodeDecodeError:
        text = block.decode("utf-8", errors="replace")
        replaced = text.count("\ufffd") - block.count(_REPLACEMENT_UTF8)
        stats.repair("invalid_utf8", path, replaced)
        return text
