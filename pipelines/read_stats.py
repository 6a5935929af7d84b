"""`ReadStats`: what the document reader read, and what it skipped or repaired, per file."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class ReadStats:
    """Counters filled in by `pipelines.documents` while it reads.

    `skipped` maps a reason to `{file: count}` for input that was dropped: `binary_file`,
    `empty_file`, `read_error` (an unreadable file, a symlink loop or a dangling link; count 1
    per file) and `giant_line` (count of lines).
    `repaired` maps a reason to `{file: count}` for input that was kept after a fix: `bom`
    (a UTF-8 byte-order mark removed) and `invalid_utf8` (byte sequences replaced by U+FFFD).

    Args:
        files_read: int. Files read to the end (skipped files are not counted).
        bytes_read: int. Bytes read (after gzip decompression), BOM included.
        documents: int. Documents yielded.
        sentences: int. Sentences in the documents yielded.

    Example:
    >>> from pipelines.documents import iter_documents
    >>> stats = ReadStats()
    >>> docs = list(iter_documents("corpus/*.txt", stats=stats))
    >>> stats.to_dict()["documents"] == len(docs)
    True
    """

    files_read: int = 0
    bytes_read: int = 0
    documents: int = 0
    sentences: int = 0
    skipped: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    repaired: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)

    def skip(self, reason: str, path: str, count: int = 1) -> None:
        """Counts `count` pieces of `path` dropped for `reason`."""
        _add(self.skipped, reason, path, count)

    def repair(self, reason: str, path: str, count: int = 1) -> None:
        """Counts `count` fixes of `reason` made to `path`."""
        _add(self.repaired, reason, path, count)

    def merge(self, other: ReadStats) -> ReadStats:
        """Adds `other`'s counts into this one (e.g. one `ReadStats` per worker) and returns it."""
        self.files_read += other.files_read
        self.bytes_read += other.bytes_read
        self.documents += other.documents
        self.sentences += other.sentences
        for mine, theirs in ((self.skipped, other.skipped), (self.repaired, other.repaired)):
            for reason, per_file in theirs.items():
                for path, count in per_file.items():
                    _add(mine, reason, path, count)
        return self

    def to_dict(self) -> dict:
        """A JSON-ready copy, files sorted so the same input gives the same JSON."""
        return {
            "files_read": self.files_read,
            "bytes_read": self.bytes_read,
            "documents": self.documents,
            "sentences": self.sentences,
            "skipped": _sorted(self.skipped),
            "repaired": _sorted(self.repaired),
        }

    @classmethod
    def from_dict(cls, config: dict) -> ReadStats:
        """The inverse of `to_dict` (e.g. to merge stats that workers wrote to disk)."""
        return cls(
            files_read=config["files_read"],
            bytes_read=config["bytes_read"],
            documents=config["documents"],
            sentences=config["sentences"],
            skipped={r: dict(f) for r, f in config["skipped"].items()},
            repaired={r: dict(f) for r, f in config["repaired"].items()},
        )


def _add(table: dict[str, dict[str, int]], reason: str, path: str, count: int) -> None:
    per_file = table.setdefault(reason, {})
    per_file[path] = per_file.get(path, 0) + count


def _sorted(table: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {reason: dict(sorted(table[reason].items())) for reason in sorted(table)}
