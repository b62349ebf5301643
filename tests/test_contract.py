"""The contract every suite keeps: a Python API module with a documented ``evaluate``, metric
cards, model kinds, a demo, and the same role files."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect

import pytest

from chemassay.report.result import Result
from chemassay.suites import all_suites

SUITES = [(suite.name, suite.alias) for suite in all_suites()]

ROLE_FILES = ("api", "cli", "data", "metrics", "baselines", "demo", "plots")


@pytest.mark.parametrize(("cli_name", "module"), SUITES)
def test_suite_exposes_the_contract(cli_name, module):
    api = importlib.import_module(f"chemassay.{module}")
    assert callable(api.evaluate), f"chemassay.{module} has no evaluate()"
    assert ">>>" in (api.evaluate.__doc__ or ""), f"chemassay.{module}.evaluate has no docstring example"
    returns = inspect.signature(api.evaluate).return_annotation
    assert returns in (Result, "Result"), f"chemassay.{module}.evaluate must be annotated -> Result"
    for role in ROLE_FILES:
        assert importlib.util.find_spec(f"chemassay.suites.{module}.{role}") is not None, f"{module} lacks {role}.py"
    metrics = importlib.import_module(f"chemassay.suites.{module}.metrics")
    cards = metrics.METRIC_CARDS
    assert cards and all(card.suite == cli_name for card in cards)
    baselines = importlib.import_module(f"chemassay.suites.{module}.baselines")
    assert all(kind.suite == cli_name for kind in baselines.MODEL_KINDS)
    demo = importlib.import_module(f"chemassay.suites.{module}.demo")
    assert callable(demo.run_demo)


@pytest.mark.parametrize(("cli_name", "module"), SUITES)
def test_api_docstring_examples_run(cli_name, module):
    api = importlib.import_module(f"chemassay.suites.{module}.api")
    failures, tried = doctest.testmod(api, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert tried > 0 and failures == 0
