"""Fixtures for the SQuAD tests: the real questions and the release vocabulary."""

import json

import pytest

SQUAD = "squad/squad-v2.0-dev-part.json"
SPM = "vocab/30k-clean.reconstructed.model"


@pytest.fixture(scope="session")
def squad_file(shared_data):
    return shared_data / SQUAD


@pytest.fixture(scope="session")
def squad_json(squad_file):
    return json.loads(squad_file.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def spm_path(shared_data):
    return shared_data / SPM
