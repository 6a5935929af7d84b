"""The document reader: the reference sentences on the real books, and every kind of bad input."""

import gzip
import json

import pytest

from pipelines import documents
from pipelines.documents import (
    iter_documents,
    iter_file_documents,
    list_input_files,
    split_sentences,
)
from pipelines.read_stats import ReadStats


def _write(path, data: bytes):
    path.write_bytes(data)
    return str(path)


def _reference_documents(data):
    text = (data / "reference" / "gutenberg_sentences.txt").read_text(encoding="utf-8")
    return [document.split("\n") for document in text.rstrip("\n").split("\n\n")]


# === The real books ===


def test_text_format_reproduces_the_reference_sentences(shared_data):
    # tests/data's reference: the official format of the first 29 documents of the book slice.
    stats = ReadStats()
    ours = list(iter_documents(str(shared_data / "corpus/gutenberg/1342-0.txt"), stats=stats))
    reference = _reference_documents(shared_data)
    assert len(reference) == 29 and len(ours) == 30  # the slice ends inside its 30th document
    # The reference kept the UTF-8 byte-order mark (and the space that joined it to the next
    # line); we drop it. Every other sentence is identical.
    differing = []
    for document_index, (mine, theirs) in enumerate(zip(ours, reference)):
        assert len(mine) == len(theirs), document_index
        differing += [(m, t) for m, t in zip(mine, theirs) if m != t]
    assert len(differing) == 1
    assert all(t.startswith("\ufeff") and t[1:].strip() == m for m, t in differing)
    assert stats.sentences == sum(map(len, ours)) > sum(map(len, reference)) == 1654
    assert stats.files_read == 1 and stats.skipped == {} and len(stats.repaired["bom"]) == 1


@pytest.mark.slow  # the six whole books against ../shared/data's 8 MB reference
def test_text_format_reproduces_the_whole_reference(full_data):
    stats = ReadStats()
    ours = list(iter_documents(str(full_data / "corpus/gutenberg/[0-9]*.txt"), stats=stats))
    reference = _reference_documents(full_data)
    assert len(ours) == len(reference) == 1407
    # The reference kept the UTF-8 byte-order mark of four books (and the space that joined it
    # to the next line); we drop it. Every other sentence is identical.
    differing = []
    for document_index, (mine, theirs) in enumerate(zip(ours, reference)):
        assert len(mine) == len(theirs), document_index
        differing += [(m, t) for m, t in zip(mine, theirs) if m != t]
    assert len(differing) == 4
    assert all(t.startswith("\ufeff") and t[1:].strip() == m for m, t in differing)
    assert stats.documents == 1407
    assert stats.sentences == sum(map(len, reference)) == 79340
    assert stats.files_read == 6 and stats.skipped == {}
    assert len(stats.repaired["bom"]) == 4


def test_sentences_format_reads_the_reference_file_back(shared_data):
    path = str(shared_data / "reference" / "gutenberg_sentences.txt")
    ours = list(iter_documents(path, "sentences"))
    reference = _reference_documents(shared_data)
    reference[0][0] = reference[0][0].lstrip("\ufeff")  # the file's own BOM, dropped
    assert ours == reference and len(ours) == 29


def test_paragraphs_per_document_groups_paragraphs(tmp_path):
    text = "".join(f"Paragraph {i} line one\nline two. Second {i}.\n\n" for i in range(7))
    path = _write(tmp_path / "p.txt", text.encode())
    docs = list(iter_file_documents(path, paragraphs_per_document=3))
    assert [len(d) for d in docs] == [6, 6, 2]
    assert docs[0][:2] == ["Paragraph 0 line one line two.", "Second 0."]
    assert docs[2] == ["Paragraph 6 line one line two.", "Second 6."]


def test_split_sentences_rule():
    assert split_sentences('It rained. “Again?” she asked.  "Yes!" No. yes. Mr. Smith') == [
        "It rained.",
        "“Again?” she asked.",
        '"Yes!" No. yes.',
        "Mr.",
        "Smith",
    ]
    assert split_sentences("   ") == []
    assert split_sentences("No stop at all") == ["No stop at all"]


# === Files and patterns ===


def test_list_input_files_sorts_dedups_and_splits_commas(tmp_path):
    for name in ("b.txt", "a.txt", "c.gz"):
        _write(tmp_path / name, b"x\n")
    (tmp_path / "sub.txt").mkdir()  # a directory matching the pattern is left out
    found = list_input_files(f"{tmp_path}/*.txt,{tmp_path}/a.txt")
    assert found == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert list_input_files([f"{tmp_path}/*.gz", f"{tmp_path}/b*"]) == [
        str(tmp_path / "b.txt"),
        str(tmp_path / "c.gz"),
    ]


def test_existing_names_are_taken_literally(tmp_path):
    odd = _write(tmp_path / "part[1],b.txt", b"Odd name.\n")
    _write(tmp_path / "part1.txt", b"Other.\n")
    assert list_input_files(odd) == [odd]
    assert list(iter_documents([odd])) == [["Odd name."]]


def test_missing_pattern_is_a_clear_error(tmp_path):
    _write(tmp_path / "a.txt", b"x\n")
    with pytest.raises(FileNotFoundError, match=r"'.*nothing\*\.txt' matches no file"):
        list(iter_documents(f"{tmp_path}/a.txt,{tmp_path}/nothing*.txt"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        list(iter_file_documents(str(tmp_path / "gone.txt")))


def test_bad_arguments_are_clear_errors(tmp_path):
    path = _write(tmp_path / "a.txt", b"x\n")
    with pytest.raises(ValueError, match="input_format='csv'"):
        list(iter_documents(path, "csv"))
    with pytest.raises(ValueError, match="paragraphs_per_document=0"):
        list(iter_documents(path, paragraphs_per_document=0))


# === Bad input: repaired or skipped, counted, never a crash ===


def test_bom_and_crlf(tmp_path):
    path = _write(tmp_path / "w.txt", b"\xef\xbb\xbfOne line\r\nwrapped. Two.\r\n\r\nThree.\r\n")
    stats = ReadStats()
    assert list(iter_file_documents(path, stats=stats)) == [["One line wrapped.", "Two.", "Three."]]
    assert stats.repaired == {"bom": {path: 1}}
    stats = ReadStats()
    docs = list(iter_file_documents(path, "sentences", stats=stats))
    assert docs == [["One line", "wrapped. Two."], ["Three."]]


def test_classic_mac_line_ends(tmp_path):
    path = _write(tmp_path / "mac.txt", b"A one.\rB two.\r\rC three.\r")
    assert list(iter_file_documents(path, "sentences")) == [["A one.", "B two."], ["C three."]]


def test_invalid_utf8_is_replaced_and_counted(tmp_path):
    # Two invalid sequences, and one genuine U+FFFD that must not be counted.
    data = "Caf\ufffd ok. ".encode() + b"Bad \xff byte. Cut \xe2\x82 here.\n"
    path = _write(tmp_path / "bad.txt", data)
    stats = ReadStats()
    docs = list(iter_file_documents(path, stats=stats))
    assert docs == [["Caf\ufffd ok.", "Bad \ufffd byte.", "Cut \ufffd here."]]
    assert stats.repaired == {"invalid_utf8": {path: 2}}
    assert stats.files_read == 1 and stats.skipped == {}


def test_empty_and_blank_files_are_skipped(tmp_path):
    empty = _write(tmp_path / "empty.txt", b"")
    blank = _write(tmp_path / "blank.txt", b"\n  \r\n\t\n")
    good = _write(tmp_path / "good.txt", b"Hello.\n")
    stats = ReadStats()
    assert list(iter_documents(str(tmp_path / "*.txt"), stats=stats)) == [["Hello."]]
    assert stats.skipped == {"empty_file": {blank: 1, empty: 1}}
    assert stats.files_read == 1 and good


def test_binary_file_is_skipped(tmp_path):
    binary = _write(tmp_path / "a.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    utf16 = _write(tmp_path / "b.txt", "Hello there.\n".encode("utf-16"))
    good = _write(tmp_path / "c.txt", b"Fine.\n")
    stats = ReadStats()
    assert list(iter_documents(f"{tmp_path}/*", stats=stats)) == [["Fine."]]
    assert stats.skipped == {"binary_file": {binary: 1, utf16: 1}}
    assert stats.files_read == 1 and good


def test_giant_lines_are_skipped_and_counted(tmp_path):
    data = b"Before.\n" + b"x" * 5000 + b"\nAfter.\n\n" + b"y" * 4001 + b"\nLast.\n"
    path = _write(tmp_path / "g.txt", data)
    stats = ReadStats()
    docs = list(iter_file_documents(path, "sentences", max_line_chars=4000, stats=stats))
    assert docs == [["Before.", "After."], ["Last."]]
    assert stats.skipped == {"giant_line": {path: 2}}


def test_giant_line_longer_than_a_block(tmp_path, monkeypatch):
    # Small blocks so the line spans many of them: it is dropped without being held whole.
    monkeypatch.setattr(documents, "_BLOCK_BYTES", 64)
    data = b"Before.\n" + b"z" * 1000 + b"\nAfter.\n\nNext doc.\n"
    path = _write(tmp_path / "g.txt", data)
    stats = ReadStats()
    docs = list(iter_file_documents(path, "sentences", max_line_chars=50, stats=stats))
    assert docs == [["Before.", "After."], ["Next doc."]]
    assert stats.skipped == {"giant_line": {path: 1}}


@pytest.mark.parametrize("block_bytes", [7, 64, 1 << 22])
def test_block_boundaries_do_not_change_the_output(tmp_path, monkeypatch, block_bytes):
    text = "".join(
        f"Para {i} starts here\r\n  and goes on. “Quote {i}!” Next.\r\n" + "\r\n" * (i % 3 + 1)
        for i in range(40)
    )
    path = _write(tmp_path / "t.txt", text.encode())
    monkeypatch.setattr(documents, "_BLOCK_BYTES", block_bytes)
    for input_format in ("text", "sentences"):
        docs = list(iter_file_documents(path, input_format, paragraphs_per_document=3))
        monkeypatch.setattr(documents, "_BLOCK_BYTES", 1 << 22)
        assert docs == list(iter_file_documents(path, input_format, paragraphs_per_document=3))
        monkeypatch.setattr(documents, "_BLOCK_BYTES", block_bytes)
    assert len(list(iter_file_documents(path, paragraphs_per_document=3))) == 14


def test_gzip_and_corrupt_gzip(tmp_path):
    text = b"First one. Second one.\n\nThird.\n"
    good = str(tmp_path / "a.txt.gz")
    with gzip.open(good, "wb") as f:
        f.write(text)
    corrupt = _write(tmp_path / "b.txt.gz", gzip.compress(text)[:-12] + b"garbage!")
    stats = ReadStats()
    docs = list(iter_documents(str(tmp_path / "*.gz"), stats=stats))
    assert docs == [["First one.", "Second one.", "Third."]]
    assert stats.skipped == {"read_error": {corrupt: 1}}
    assert stats.files_read == 1 and stats.bytes_read >= len(text)


def test_stats_merge_and_json_round_trip(tmp_path):
    a = _write(tmp_path / "a.txt", b"\xef\xbb\xbfA. B.\n\nC.\n")
    b = _write(tmp_path / "b.txt", b"")
    first, second = ReadStats(), ReadStats()
    list(iter_file_documents(a, "sentences", stats=first))
    list(iter_file_documents(b, "sentences", stats=second))
    merged = ReadStats().merge(first).merge(second)
    as_json = json.loads(json.dumps(merged.to_dict()))
    assert as_json == {
        "files_read": 1,
        "bytes_read": 13,
        "documents": 2,
        "sentences": 2,
        "skipped": {"empty_file": {b: 1}},
        "repaired": {"bom": {a: 1}},
    }
    assert ReadStats.from_dict(as_json) == merged


def test_symlink_loops_and_dangling_links_in_a_glob_are_skipped_and_counted(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "good.txt").write_text("One sentence here. And a second one.\n")
    (bad / "loop").symlink_to(bad / "loop")  # a loop: open() fails with ELOOP
    (bad / "a").symlink_to(bad / "b")
    (bad / "b").symlink_to(bad / "a")  # a two-link loop
    (bad / "dangling").symlink_to(tmp_path / "gone.txt")
    assert list_input_files(str(bad / "*")) == [str(bad / n) for n in ("a", "b", "dangling",
                                                                       "good.txt", "loop")]  # fmt: skip
    stats = ReadStats()
    documents = list(iter_documents(str(bad / "*"), stats=stats))
    assert documents == [["One sentence here.", "And a second one."]]
    assert stats.files_read == 1
    assert stats.to_dict()["skipped"] == {
        "read_error": {str(bad / n): 1 for n in ("a", "b", "dangling", "loop")}
    }
