"""ChoiceExamples: multiple-choice examples as the model reads them, from any reader."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class ChoiceExamples:
    """The examples of one multiple-choice file.

    Each option is read as a text pair: `contexts[i]` first, `pairs[i][j]` second (RACE: the
    article, then the question with option j; SWAG: the first sentence, then the second's start
    with ending j).

    Args:
        path: str. The file (or folder) read.
        ids: list of str. Each example's id (`file:line`, or the file's own id).
        contexts: list of str. The first segment of every pair of an example.
        pairs: list of list of str. The second segment, one per option.
        options: list of list of str. The options as the file gives them (what `predict` names).
        labels: list of int or None. The right option's index (None: a file without answers).
        where: list of str. Each example's `file:line` (or file), for error messages.
    """

    path: str
    ids: list = dataclasses.field(default_factory=list)
    contexts: list = dataclasses.field(default_factory=list)
    pairs: list = dataclasses.field(default_factory=list)
    options: list = dataclasses.field(default_factory=list)
    labels: list | None = dataclasses.field(default_factory=list)
    where: list = dataclasses.field(default_factory=list)

    def __len__(self) -> int:
        return len(self.contexts)

    @property
    def num_options(self) -> int:
        """The number of options every example has (checked by the readers)."""
        return len(self.options[0]) if self.options else 0

    def check(self) -> ChoiceExamples:
        """Refuses an empty file and examples with differing numbers of options (one line)."""
        if not self.contexts:
            raise ValueError(f"{self.path}: no examples")
        for where, options in zip(self.where, self.options):
            if len(options) != self.num_options:
                raise ValueError(
                    f"{where}: {len(options)} options, but the first example has "
                    f"{self.num_options}; every example needs as many"
                )
        if self.labels is not None and all(label is None for label in self.labels):
            self.labels = None
        return self
