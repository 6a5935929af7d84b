"""Fixtures for the converter tests."""

import pytest
from convert_helpers import TINY_OFFICIAL_CONFIG, random_official_weights


@pytest.fixture
def official_config():
    return dict(TINY_OFFICIAL_CONFIG)


@pytest.fixture
def official_weights(official_config):
    return random_official_weights(official_config)
