"""The contract every suite keeps: a Python API module with a documented ``evaluate``, metric
cards, model kinds, a demo, and the same role files."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

from chemassay.contract.result import Result
from chemassay.suites import all_suites

SUITES = [(suite.name, suite.alias) for suite in all_suites()]

ROLE_FILES = ("suite", "api", "cli", "data", "datasets", "metrics", "baselines", "assay", "details", "published", "plots")


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
    declared = next(suite for suite in all_suites() if suite.name == cli_name)
    assert declared.load("assay").baseline and declared.load("published").paper
    assert all(declared.details_model(task) is not None for task in declared.details)


SRC = Path(__file__).resolve().parents[1] / "src" / "chemassay"


def _python_files(folder: Path):
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _is_cli(path: Path) -> bool:
    """The CLI modules: the ``chemassay.cli`` package, each suite's ``cli*.py`` and
    ``__main__.py`` (``python -m chemassay``)."""
    parts = path.relative_to(SRC).parts
    return (parts[0] in ("cli", "__main__.py")
            or (len(parts) == 3 and parts[0] == "suites" and parts[2].startswith("cli")))


def test_no_shared_layer_names_a_suite():
    """cli, demo, assay, models, report, data, runtime and chem ask the suite registry; none of
    them imports a suite's package or compares, indexes or keys by a suite's name."""
    suites = all_suites()
    names = {s.name for s in suites} | {s.alias for s in suites}
    packages = tuple(s.module for s in suites)
    offences = []
    for path in _python_files(SRC):
        if "suites" in path.relative_to(SRC).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                modules += [alias.name for alias in node.names]
                offences += [f"{path.name}:{node.lineno} imports {m}" for m in modules if m.startswith(packages)]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "get" and node.args:
                node.args[0].chemassay_allowed = True  # a JSON field looked up by name, not a suite
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and not getattr(node, "chemassay_allowed", False):
                text = node.value
                if text in names or text.startswith(tuple(f"{p}." for p in packages) + tuple(f"{p}:" for p in packages)):
                    offences.append(f"{path.name}:{node.lineno} names {text!r}")
    assert not offences, offences


def test_only_the_cli_modules_import_the_terminal_toolkit():
    offences = []
    for path in _python_files(SRC):
        if _is_cli(path):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            modules = []
            if isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            offences += [f"{path.relative_to(SRC)}:{node.lineno} imports {m}" for m in modules
                         if m.split(".")[0] in {"typer", "rich", "click"} or m == "chemassay.cli" or m.startswith("chemassay.cli.")]
    assert not offences, offences


def _protocol_words() -> dict[str, str]:
    """Every registered protocol's name and method (as strings a shared layer could key by)."""
    from chemassay.models.protocols import all_protocols

    words = {}
    for protocol in all_protocols().values():
        words[protocol.name] = f"the name of protocol {protocol.name}"
        words[protocol.method] = f"the method of protocol {protocol.name}"
    return words


def test_no_shared_layer_names_a_protocol():
    """models, report, data, runtime, chem, contract, cli and the assay ask the protocol objects
    (each suite's protocol.py); none of them holds a protocol's name or method as a string, and
    none defines a function that is a protocol's method outside a model class."""
    words = _protocol_words()
    offences = []
    for path in _python_files(SRC):
        if "suites" in path.relative_to(SRC).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in words:
                if node.value == "encoder" and path.relative_to(SRC).parts[0] == "models":
                    continue  # the encoder half of an encoder-decoder network (and its describe() key)
                offences.append(f"{path.relative_to(SRC)}:{node.lineno} names {node.value!r} ({words[node.value]})")
    assert not offences, offences


def test_the_protocol_check_catches_a_shared_layer_that_names_a_protocol(tmp_path, monkeypatch):
    """The check above can fail: a shared module keyed by a protocol's name is caught."""
    fake = tmp_path / "chemassay"
    (fake / "models").mkdir(parents=True)
    (fake / "models" / "readers.py").write_text('READERS = {"bag-predictor": None}\n')
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake)
    with pytest.raises(AssertionError, match="bag-predictor"):
        test_no_shared_layer_names_a_protocol()


@pytest.mark.parametrize(("cli_name", "module"), SUITES)
def test_evaluate_reads_as_reference_run_score_result(cli_name, module):
    """Each suite's evaluate is short (at most 60 lines besides its docstring) and takes the
    common options under one name each."""
    api = importlib.import_module(f"chemassay.suites.{module}.api")
    source = inspect.getsource(api.evaluate)
    function = ast.parse(source).body[0]
    body = function.body[1:] if ast.get_docstring(function) else function.body
    lines = body[-1].end_lineno - body[0].lineno + 1
    assert lines <= 60, f"chemassay.{module}.evaluate has a body of {lines} lines"
    parameters = set(inspect.signature(api.evaluate).parameters)
    assert {"model", "reference", "seed", "bootstrap", "n_jobs", "cache", "context", "options"} <= parameters
    assert not parameters & {"targets", "truth", "gold", "test", "dataset_name", "predictions_out", "samples_out",
                             "per_item", "use_cache", "show_progress"}
