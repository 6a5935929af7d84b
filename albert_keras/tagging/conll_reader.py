"""CoNLL-style tagging files: one word and its tag a line, a blank line between sentences."""

from __future__ import annotations

import dataclasses
import pathlib

DOCSTART = "-DOCSTART-"


@dataclasses.dataclass
class TaggedSentences:
    """The sentences of one CoNLL-style file.

    Args:
        path: str. The file read.
        words: list of list of str. Each sentence's words.
        tags: list of list of str. Each word's tag (the line's last column).
        lines: list of list of int. Each word's line number (1-based), for error messages.
    """

    path: str
    words: list = dataclasses.field(default_factory=list)
    tags: list = dataclasses.field(default_factory=list)
    lines: list = dataclasses.field(default_factory=list)

    def __len__(self) -> int:
        return len(self.words)


def read_conll(path: str | pathlib.Path, tags_required: bool = True) -> TaggedSentences:
    """Reads a CoNLL-style file (CoNLL-2003 NER, Universal Dependencies-like POS lists, ...).

    Each non-blank line holds a word and, in its last whitespace-separated column, the word's
    tag (with `tags_required=False`, a file to predict, a line may hold the word alone: its tag
    is None) (CoNLL-2003's middle columns, part-of-speech and chunk tags, are skipped); blank lines
    end sentences; `-DOCSTART-` lines (CoNLL-2003's document breaks) are skipped.

    Raises:
        FileNotFoundError: no such file. ValueError (one line naming file and line): a line
        with a word but no tag, a file that is not UTF-8, a file with no sentence.

    Example:
    >>> _ = open("train.txt", "w").write("-DOCSTART- O\\n\\nAnna B-PER\\nlives O\\n\\nOslo B-LOC\\n")
    >>> read_conll("train.txt").words, read_conll("train.txt").tags
    ([['Anna', 'lives'], ['Oslo']], [['B-PER', 'O'], ['B-LOC']])
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    read = TaggedSentences(str(path))
    words, tags, lines = [], [], []

    def end_sentence():
        if words:
            read.words.append(list(words))
            read.tags.append(list(tags))
            read.lines.append(list(lines))
            words.clear(), tags.clear(), lines.clear()

    with path.open(encoding="utf-8") as file:
        try:
            for number, line in enumerate(file, start=1):
                fields = line.split()
                if not fields or fields[0] == DOCSTART:
                    end_sentence()
                elif len(fields) < 2 and tags_required:
                    raise ValueError(
                        f"{path}:{number}: {line.strip()!r} has no tag (expected 'WORD ... TAG')"
                    )
                else:
                    words.append(fields[0])
                    tags.append(fields[-1] if len(fields) > 1 else None)
                    lines.append(number)
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}: not UTF-8 text ({error.reason})") from None
    end_sentence()
    if not read.words:
        raise ValueError(f"{path}: no sentence (expected one 'WORD TAG' a line)")
    return read


def tag_names(train: TaggedSentences) -> list[str]:
    """The tags of a training file in a fixed order: `O` first where present, then sorted.

    Example:
    >>> tag_names(TaggedSentences("t", [["a", "b"]], [["B-PER", "O"]], [[1, 2]]))
    ['O', 'B-PER']
    """
    seen = {tag for row in train.tags for tag in row}
    return (["O"] if "O" in seen else []) + sorted(seen - {"O"})


def tag_ids(sentences: TaggedSentences, names: list[str]) -> list[list[int]]:
    """Each word's tag as its index in `names`; a tag the training file lacks is refused.

    Example:
    >>> tag_ids(TaggedSentences("dev", [["a"]], [["B-LOC"]], [[3]]), ["O", "B-PER"])
    Traceback (most recent call last):
    ValueError: dev:3: tag 'B-LOC' is not in the training file's tags (O, B-PER)
    """
    index = {name: i for i, name in enumerate(names)}
    ids = []
    for row, lines in zip(sentences.tags, sentences.lines):
        for tag, line in zip(row, lines):
            if tag not in index:
                raise ValueError(
                    f"{sentences.path}:{line}: tag {tag!r} is not in the training file's tags "
                    f"({', '.join(names)})"
                )
        ids.append([index[tag] for tag in row])
    return ids
