"""How the pretraining-data writer cuts its document stream into groups: the unit of work, of
seeding and of shard assignment, shared by the local writer and the Beam pipeline.

Documents are numbered into groups in input order (files sorted, then documents in file order):
a group closes after the document that brings it to `group_chars` characters or more, so a group
may span files. Group `g` goes to shard `g % num_shards` and seeds every draw with `(seed, g)`.
The local writer reads the stream once in order; the Beam pipeline measures every file in
parallel (`document_chars` of each document), computes each file's starting `GroupCutter.state`
in one small sequential pass over those sizes, then re-reads the files in parallel and numbers
their documents from that state: the same groups, so the same records and bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def document_chars(document: list[str]) -> int:
    """The size of a document as the grouping counts it: characters of its sentences."""
    return sum(map(len, document))


class GroupCutter:
    """Numbers documents into groups of about `group_chars` characters.

    Args:
        group_chars: int. A group closes once it holds this many characters or more.
        index: int. The group the next document joins.
        size: int. Characters already in that group.

    Example:
    >>> cutter = GroupCutter(10)
    >>> [cutter.add(n) for n in (4, 7, 3, 12, 1)]
    [0, 0, 1, 1, 2]
    >>> cutter.state
    (2, 1)
    """

    def __init__(self, group_chars: int, index: int = 0, size: int = 0):
        self.group_chars = group_chars
        self.index = index
        self.size = size

    def add(self, chars: int) -> int:
        """Adds a document of `chars` characters; returns the group it belongs to."""
        group = self.index
        self.size += chars
        if self.size >= self.group_chars:
            self.index, self.size = self.index + 1, 0
        return group

    @property
    def state(self) -> tuple[int, int]:
        """`(index, size)`: where the next document goes (a new `GroupCutter` resumes from it)."""
        return self.index, self.size


def iter_groups(
    documents: Iterable[list[str]], group_chars: int
) -> Iterator[tuple[int, list[list[str]]]]:
    """Cuts a document stream into numbered groups: yields `(group_index, documents)`.

    Example:
    >>> [(g, len(docs)) for g, docs in iter_groups([["abcd"], ["efghijk"], ["x"]], 10)]
    [(0, 2), (1, 1)]
    """
    cutter = GroupCutter(group_chars)
    group, index = [], 0
    for document in documents:
        index = cutter.add(document_chars(document))
        group.append(document)
        if cutter.index != index:
            yield index, group
            group = []
    if group:
        yield index, group


def file_start_states(
    file_sizes: Iterable[tuple[str, list[int]]], group_chars: int
) -> Iterator[tuple[str, tuple[int, int]]]:
    """The `GroupCutter.state` at the start of each file, from every file's document sizes.

    Args:
        file_sizes: `(path, [document_chars, ...])` of every input file, in any order.
        group_chars: int.

    Yields:
        `(path, (index, size))` for each file holding documents, in input (sorted path) order.

    Example:
    >>> list(file_start_states([("b", [3]), ("a", [4, 7])], 10))
    [('a', (0, 0)), ('b', (1, 0))]
    """
    cutter = GroupCutter(group_chars)
    for path, sizes in sorted(file_sizes):
        if not sizes:
            continue
        yield path, cutter.state
        for chars in sizes:
            cutter.add(chars)
