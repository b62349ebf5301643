"""Shared fixtures: a small real slice of USPTO-15K processed once per test session."""

from __future__ import annotations

import pytest

from chemassay.suites.stoichiometry.data import resolve_source
from chemassay.suites.stoichiometry.prepare import RebalanceConfig, process_source

LIMIT = 120


@pytest.fixture(scope="session")
def uspto_slice():
    """The first 120 reactions of each USPTO-15K split, balanced/re-balanced (default library)."""
    return process_source(resolve_source("uspto-15k"), RebalanceConfig(keep_original=True), limit=LIMIT)
