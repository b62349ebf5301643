"""The package's import structure: plain imports without import hooks, and layers that import
only downwards (docs: DESIGN's "Layout")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter with this tree's sources first; it prints one JSON line."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_suite_aliases_are_plain_modules_without_an_import_hook():
    """``import chemassay.<alias>`` works as a program's first import, gives the suite's api
    module itself, and ``import chemassay`` imports no api, pydantic, torch or typer."""
    seen = _fresh("""
import json, sys
import chemassay
heavy = sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'torch', 'transformers', 'typer', 'dask', 'faiss'})
executed = sorted(m for m, mod in sys.modules.items() if m.endswith('.api') and type(mod).__name__ == 'module')
finders = [type(f).__module__ for f in sys.meta_path if type(f).__module__.startswith('chemassay')]
import chemassay.generation
import chemassay.suites.generation.api as api
from chemassay import reaction_ood
from chemassay.robustness import evaluate
import chemassay.assaying
assay_function = type(chemassay.assay).__name__ == 'function' and chemassay.assay is chemassay.assaying.assay
print(json.dumps({"heavy": heavy, "executed": executed, "finders": finders,
                  "same": chemassay.generation is api and api is sys.modules['chemassay.generation'],
                  "evaluate": api.evaluate.__module__, "reaction_ood": reaction_ood.__name__,
                  "robustness": evaluate.__module__, "assay": assay_function}))
""")
    assert seen["heavy"] == [] and seen["executed"] == [] and seen["finders"] == []
    assert seen["same"] and seen["evaluate"] == "chemassay.suites.generation.api"
    assert seen["reaction_ood"] == "chemassay.suites.reaction_ood.api"
    assert seen["robustness"] == "chemassay.suites.robustness.api"
    # chemassay.assay is the function, also once its module chemassay.assaying is imported
    assert seen["assay"]


def test_a_suite_registered_at_run_time_gets_its_alias_and_loses_it(toy_suite):
    import chemassay.formula as formula  # registered by the fixture

    import chemassay
    from chemassay.suites import unregister_suite

    assert chemassay.formula is formula is sys.modules["support.toy_suite"]
    unregister_suite("formula")
    assert "chemassay.formula" not in sys.modules and not hasattr(chemassay, "formula")


def test_a_suite_alias_cannot_shadow_a_module_of_chemassay():
    import pytest

    from chemassay.suites import DuplicateSuiteError, Suite, find_suite, register_suite

    shadow = Suite(name="report", module="support.toy_suite", title="t", reproduces="r", protocols=("p",),
                   api="support.toy_suite")
    with pytest.raises(DuplicateSuiteError, match="already a module of chemassay"):
        register_suite(shadow)
    assert find_suite("report") is None and sys.modules["chemassay.report"].__name__ == "chemassay.report"
