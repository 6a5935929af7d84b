"""Helpers for the SQuAD tests: a small SQuAD file written from paragraphs and questions."""

import json


def make_squad_file(path, paragraphs, version="v2.0"):
    """Writes a one-article SQuAD file: paragraphs = [(context, [qa, ...]), ...]."""
    data = {
        "version": version,
        "data": [{"title": "t", "paragraphs": [{"context": c, "qas": q} for c, q in paragraphs]}],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
