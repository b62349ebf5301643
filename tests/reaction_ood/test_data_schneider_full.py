"""The whole bundled Schneider 50k set through clean, every shipped Schneider split, and verify.

Slow (cleaning 50,000 reactions takes minutes on 2 cores); ``benchmarks/reaction_ood_scale.py``
exercises the same path at scale.
"""

from __future__ import annotations

import pytest

from chemassay.suites.reaction_ood.clean import clean_file
from chemassay.suites.reaction_ood.io import schneider_50k_path
from chemassay.suites.reaction_ood.split_files import split_file
from chemassay.suites.reaction_ood.splits import list_split_definitions, split_definition
from chemassay.suites.reaction_ood.verify import verify_split_dir

pytestmark = pytest.mark.slow


def test_schneider_full_pipeline(tmp_path):
    clean = tmp_path / "schneider_clean.parquet"
    report = clean_file(schneider_50k_path(), clean, n_jobs=2)
    counts = report.counts()
    assert counts["rows_in"] == 50_000 and counts["unparsable"] == 0
    assert counts["rows_out"] + counts["duplicates"] + sum(
        v for k, v in counts.items() if k not in ("rows_in", "rows_out", "duplicates", "unparsable")
    ) == 50_000
    for name in (n for n in list_split_definitions() if n.startswith("schneider_")):
        definition = split_definition(name)
        folder = tmp_path / name
        split_file(clean, folder, definition["kind"], definition, definition["seed"])
        _, results = verify_split_dir(folder)
        assert all(r.passed for r in results), (name, [r for r in results if not r.passed])
