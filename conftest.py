"""The environment every test and every docstring example of src runs in (``make test`` runs
both: ``testpaths = ["tests", "src"]`` with ``--doctest-modules``)."""

from __future__ import annotations

import os

os.environ.setdefault("MPLBACKEND", "Agg")
# Every result a test or an example builds must carry only metric keys its suite's cards declare.
os.environ["CHEMASSAY_STRICT_CARDS"] = "1"
# Commands and examples (``chemassay.assay.assay`` records its results) must not fill the
# user's results store; the store's own tests switch it back on in a temporary $CHEMASSAY_HOME.
os.environ.setdefault("CHEMASSAY_NO_STORE", "1")
# pytest-xdist's worker processes (``make test`` runs one per core) start with COLUMNS=80 and
# LINES=24; the commands' consoles would then wrap at 80 columns there but not in one process
# (no terminal: 240 columns). Tests see the same environment either way.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
