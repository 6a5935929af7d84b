"""`WordTable`: numbers the words of a text (as `str.split()` cuts it) in whole-array steps.

Made for the data writer's former word cache, which needed, for every word of a batch of
sentences, the number of that distinct word; the writer now encodes whole sentences (a word's
SentencePiece pieces can depend on the words before it: `pipelines/tokenization.py`), so nothing
in `pipelines` uses it today. `str.split()` and a dict make and hash a string object per word.
Here the text's UTF-8 bytes are cut at whitespace with NumPy, each word of up to 16 bytes
becomes an exact key (its bytes as two uint64 and its length) and the keys are looked up in an
open-addressing hash table held in NumPy arrays, all words at once: half the CPU time on the
six books in batches of 20,000 sentences, new words included
(`benchmarks/word_table.py`: 1.9-2.0x, ~85 against ~165 ns a word here).
Neither NumPy nor the standard library has a hash table over array rows, hence by hand. A
longer word (0.1% of prose) is keyed by its serial number in a dict of their bytes.
"""

from __future__ import annotations

import numpy as np

from pipelines.text_normalization import WHITESPACE

_KEY_BYTES = 16
_CHUNK_WORDS = 1 << 17
_EMPTY = -1
# Bytes that are whitespace alone (ASCII), and the code points of the other whitespace
# characters, found at their UTF-8 lead bytes (2 and 3 bytes long: all are below U+10000).
_ASCII_SPACE = np.zeros(256, bool)
_ASCII_SPACE[[ord(c) for c in WHITESPACE if c.isascii()]] = True
_WIDE_SPACES = np.array(sorted(ord(c) for c in WHITESPACE if not c.isascii()), np.int64)
# The low `i` bytes of a little-endian uint64.
_LOW_BYTES = np.array([(1 << (8 * i)) - 1 for i in range(9)], np.uint64)
# Odd multipliers of the key hash: the fractional bits of the golden ratio and of sqrt(2), and
# SplitMix64's first multiplier.
_MIX = np.array([0x9E3779B97F4A7C15, 0x6A09E667F3BCC909, 0xBF58476D1CE4E5B9], np.uint64)


class WordTable:
    """Numbers distinct whitespace-separated words 0, 1, 2, ...

    The words new to a call are numbered after all earlier ones, in the order first seen.

    Example:
    >>> table = WordTable()
    >>> numbers, new = table.number("the cat saw the\\tdog")
    >>> numbers.tolist(), new
    ([0, 1, 2, 0, 3], ['the', 'cat', 'saw', 'dog'])
    >>> numbers, new = table.number(" a dog, the cat ")
    >>> numbers.tolist(), new, len(table)
    ([4, 5, 0, 1], ['a', 'dog,'], 6)
    """

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        """Forgets every word."""
        self._cells = np.full(1 << 10, _EMPTY, np.int32)  # numbers; a power of two of them
        # Each number's key: its first and next 8 bytes (zero-padded) and its length in bytes;
        # for a word of over 16 bytes, its serial number in `_long` and a length of 17.
        self._low = np.zeros(0, np.uint64)
        self._high = np.zeros(0, np.uint64)
        self._length = np.zeros(0, np.int64)
        self._long = {}  # bytes -> serial number, of the words longer than _KEY_BYTES

    def __len__(self) -> int:
        return len(self._length)

    def number(self, text: str) -> tuple[np.ndarray, list[str]]:
        """The number of each word of `text`; words not seen before are numbered after the rest.

        Args:
            text: str.

        Returns:
            `(numbers, new)`: an int64 array, one number per word of `text.split()`, and the
            words new to the table, in the order of their numbers (from the table's old size).
        """
        raw = text.encode("utf-8", "surrogatepass")
        # Zeros after the end, so that every word's 16 bytes can be read.
        padded = raw + bytes(_KEY_BYTES)
        starts, ends = _word_spans(np.frombuffer(padded, np.uint8, len(raw)))
        numbers = np.empty(len(starts), np.int64)
        firsts = [np.zeros(0, np.int64)]
        # Words a chunk at a time: the arrays of a chunk stay in the CPU's cache (~20% faster
        # than all the words of a 20,000-sentence batch at once).
        for i in range(0, len(starts), _CHUNK_WORDS):
            chunk_starts, chunk_ends = starts[i : i + _CHUNK_WORDS], ends[i : i + _CHUNK_WORDS]
            keys = self._keys(padded, chunk_starts, chunk_ends)
            numbers[i : i + len(chunk_starts)], new = self._number_keys(*keys)
            firsts.append(new + i)
        firsts = np.concatenate(firsts)
        return numbers, _decode_words(padded, starts[firsts], ends[firsts])

    def _keys(self, padded: bytes, starts: np.ndarray, ends: np.ndarray):
        """Each word's key: its first and next 8 bytes (zero beyond its end) and its length in
        bytes; for a longer word, its serial number in `_long`, 0 and `_KEY_BYTES + 1`."""
        # Every byte offset's next 8 bytes as one little-endian uint64 (an unaligned view).
        windows = np.ndarray((len(padded) - 7,), "<u8", padded, 0, (1,))
        length = ends - starts
        low = windows[starts] & _LOW_BYTES[np.minimum(length, 8)]
        high = windows[starts + 8] & _LOW_BYTES[np.clip(length - 8, 0, 8)]
        long_words = np.flatnonzero(length > _KEY_BYTES)
        if len(long_words):
            spans = zip(starts[long_words].tolist(), ends[long_words].tolist())
            serials = [self._long.setdefault(padded[s:e], len(self._long)) for s, e in spans]
            low[long_words], high[long_words] = serials, 0
            length[long_words] = _KEY_BYTES + 1
        return low, high, length

    def _number_keys(self, low, high, length) -> tuple[np.ndarray, np.ndarray]:
        """Each key's number, and the index of the first occurrence of each new key."""
        home = self._home(low, high, length)
        numbers, stops = self._find(low, high, length, home)
        missing = np.flatnonzero(numbers < 0)
        if not len(missing):
            return numbers, missing
        positions = stops[missing]  # where each stopped: an empty cell
        if 2 * (len(self) + len(missing)) > len(self._cells):
            self._grow(2 * (len(self) + len(missing)))
            positions = self._home(low[missing], high[missing], length[missing])
        firsts, numbers[missing] = self._insert(
            low[missing], high[missing], length[missing], positions
        )
        return numbers, missing[firsts]

    def _home(self, low, high, length) -> np.ndarray:
        """Each key's first cell."""
        mixed = (low ^ (high * _MIX[0]) ^ length.astype(np.uint64)) * _MIX[1]
        mixed ^= mixed >> np.uint64(31)
        mixed *= _MIX[2]
        bits = len(self._cells).bit_length() - 1
        return (mixed >> np.uint64(64 - bits)).astype(np.int64)

    def _same(self, numbers, low, high, length) -> np.ndarray:
        return (
            (self._length[numbers] == length)
            & (self._low[numbers] == low)
            & (self._high[numbers] == high)
        )

    def _find(self, low, high, length, positions):
        """Linear probing for all keys at once: `(number or -1, the cell each stopped at)`."""
        # The first probe over whole arrays (most keys end there), the rest over the few left.
        found = self._cells[positions].astype(np.int64)
        if not len(self):
            return found, positions.copy()
        full = found != _EMPTY  # an empty cell's -1 looks at the last key: ignored below
        same = full & self._same(found, low, high, length)
        found[~same] = _EMPTY
        stops = positions.copy()
        pending = np.flatnonzero(full & ~same)
        mask = len(self._cells) - 1
        while len(pending):
            stops[pending] = (stops[pending] + 1) & mask
            cells = self._cells[stops[pending]]
            full = cells != _EMPTY
            pending, cells = pending[full], cells[full]
            same = self._same(cells, low[pending], high[pending], length[pending])
            found[pending[same]] = cells[same]
            pending = pending[~same]
        return found, stops

    def _insert(self, low, high, length, positions):
        """Numbers keys absent from the table (repeats among them share a number).

        Returns `(firsts, numbers)`: the index of each distinct key's first occurrence, in the
        order of the numbers given, and every key's number.
        """
        old_size = len(self)
        # Each key first claims the number old_size + its index; one claim per distinct key
        # wins its cell and the others of that key then find it there.
        self._low = np.concatenate([self._low, low])
        self._high = np.concatenate([self._high, high])
        self._length = np.concatenate([self._length, length])
        claimed = np.full(len(low), -1, np.int64)  # the cell of each winning claim
        winner = np.empty(len(low), np.int64)  # the key whose claim each key found
        pending = np.arange(len(low))
        positions = positions.copy()
        mask = len(self._cells) - 1
        while len(pending):
            everyone = len(pending) == len(low)  # the first probe: no gathers
            keys = (
                (low, high, length) if everyone else (low[pending], high[pending], length[pending])
            )
            at = positions if everyone else positions[pending]
            free = self._cells[at] == _EMPTY
            self._cells[at[free]] = old_size + pending[free]  # one claim per cell wins
            cells = self._cells[at]
            same = self._same(cells, *keys)
            winner[pending[same]] = cells[same] - old_size
            mine = same & (cells == old_size + pending)
            claimed[pending[mine]] = at[mine]
            pending = pending[~same]
            positions[pending] = (positions[pending] + 1) & mask
        # Numbered in the order of each distinct key's first occurrence.
        first_seen = np.full(len(low), len(low))
        np.minimum.at(first_seen, winner, np.arange(len(low)))
        claims = np.flatnonzero(claimed >= 0)
        claims = claims[np.argsort(first_seen[claims])]
        renumbered = np.empty(len(low), np.int64)
        renumbered[claims] = old_size + np.arange(len(claims))
        self._cells[claimed[claims]] = renumbered[claims]
        keep = np.concatenate([np.arange(old_size), old_size + claims])
        self._low, self._high = self._low[keep], self._high[keep]
        self._length = self._length[keep]
        return first_seen[claims], renumbered[winner]

    def _grow(self, cells: int) -> None:
        """Rehashes every key into at least `cells` cells (inserted afresh, in number order,
        so each keeps its number)."""
        keys = self._low, self._high, self._length
        self._cells = np.full(1 << max(10, (cells - 1).bit_length()), _EMPTY, np.int32)
        self._low, self._high, self._length = (key[:0] for key in keys)
        self._insert(*keys, self._home(*keys))


def _word_spans(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Byte offsets of the start and end of each word of `data.tobytes().decode().split()`."""
    space = _ASCII_SPACE[data]
    # The few non-ASCII whitespace characters: code points at the 2- and 3-byte lead bytes.
    lead = np.flatnonzero(data >= 0xC2)
    if len(lead):
        lead = lead[data[lead] < 0xF0]
        first = data[lead].astype(np.int64)
        second = data[np.minimum(lead + 1, len(data) - 1)].astype(np.int64)
        third = data[np.minimum(lead + 2, len(data) - 1)].astype(np.int64)
        wide = first >= 0xE0
        code = np.where(
            wide,
            ((first & 0x0F) << 12) | ((second & 0x3F) << 6) | (third & 0x3F),
            ((first & 0x1F) << 6) | (second & 0x3F),
        )
        hits = np.isin(code, _WIDE_SPACES)
        at, wide = lead[hits], wide[hits]
        space[at] = space[at + 1] = True
        space[at[wide] + 2] = True
    edges = np.flatnonzero(np.diff(space, prepend=True, append=True))
    return edges[0::2], edges[1::2]


def _decode_words(padded: bytes, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """`[padded[s:e].decode() for s, e in zip(starts, ends)]` in one decode and one split: the
    words' bytes gathered, each followed by a line break (never inside a word)."""
    lengths = ends - starts
    spans = lengths + 1
    offsets = np.cumsum(spans) - spans
    source = np.repeat(starts - offsets, spans) + np.arange(int(spans.sum()))
    joined = np.frombuffer(padded, np.uint8)[source]  # a word's end is < len(padded)
    joined[offsets + lengths] = ord("\n")
    return joined.tobytes().decode("utf-8", "surrogatepass").split("\n")[:-1]
