"""The demo's corpus step says what it reads (issue 46: 63 s of nothing before): a line before
and after each source, and one every ~10 s within a big one."""

from albert_keras.demo.docstring_corpus import extract_docstring_corpus


def test_a_line_before_and_after_each_source(tmp_path):
    lines = []
    summary = extract_docstring_corpus(tmp_path, sources=("stdlib", "reference"),
                                       max_megabytes_per_source=0.02, log=lines.append)  # fmt: skip
    stdlib, reference = summary["sources"]["stdlib"], summary["sources"]["reference"]
    done = [
        f"corpus: {name}: {s['paragraphs']} paragraphs from {s['modules']} modules, "
        f"{s['megabytes']:.2f} MB"
        for name, s in (("stdlib", stdlib), ("reference", reference))
    ]
    assert lines == [
        "corpus: reading stdlib (up to 0.02 MB of prose)",
        done[0],
        "corpus: reading reference (up to 0.02 MB of prose)",
        done[1],
    ]
    assert extract_docstring_corpus(
        tmp_path / "quiet", sources=("stdlib",), max_megabytes_per_source=0.01
    )["sources"]  # silent: no log
