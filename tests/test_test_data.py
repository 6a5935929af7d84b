"""tests/data stays small and accounted for: a PROVENANCE.md in each folder naming every file
beside it (source and licence), a few MB in all."""

import pathlib

DATA = pathlib.Path(__file__).resolve().parent / "data"
MAX_BYTES = 3_000_000  # "a few MB": the ../shared/data rule stands for anything bigger


def _files():
    return [p for p in DATA.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def test_every_folder_has_a_provenance_naming_each_of_its_files():
    """Each folder that holds data files has its own PROVENANCE.md, beside the files."""
    folders = sorted({path.parent for path in _files()})
    assert [f.relative_to(DATA).as_posix() for f in folders] == [
        "corpus/gutenberg",
        "reference",
        "squad",
        "vocab",
    ]
    for folder in folders:
        provenance = (folder / "PROVENANCE.md").read_text(encoding="utf-8")
        assert "icence" in provenance, folder  # Licence / licence: said in so many words
        for path in folder.iterdir():
            if path.is_file() and path.name != "PROVENANCE.md":
                assert path.name in provenance, f"{path} is not named in {folder}/PROVENANCE.md"


def test_the_data_is_a_few_megabytes():
    total = sum(p.stat().st_size for p in _files())
    assert 1_000_000 < total < MAX_BYTES, total
