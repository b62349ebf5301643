"""The package's import structure: plain imports without import hooks, and layers that import
only downwards (docs: DESIGN's "Layout")."""

from __future__ import annotations

import ast
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


# -- the import graph of src/chemassay, read with ast (every import: top level, in functions,
#    under TYPE_CHECKING), grouped into the layers of DESIGN's "Layout" ---------------------------
PACKAGE = SRC / "chemassay"
SHARED = ("contract", "chem", "data", "models", "runtime", "report", "registry", "leaks")
"""The shared layers (``registry`` is the suite registry, ``chemassay/suites/__init__.py``):
no import cycle among them."""
CLI_HELPERS = ("chemassay.cli.tools", "chemassay.cli.")
"""The CLI's shared helpers (``chemassay.cli.*``), which a suite's own ``cli*.py`` may import."""


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names (``from a import b``: ``a.b`` when it is a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parent = module.split(".") if is_package else module.split(".")[:-1]
        parent = parent[: len(parent) - (node.level - 1)]
        base = ".".join(parent + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]


def _edges() -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import of a chemassay module inside src/chemassay."""
    edges = set()
    for module, (path, is_package) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= {(module, target, node.lineno) for target in _imported(module, is_package, node)
                          if target == "chemassay" or target.startswith("chemassay.")}
    return sorted(edges)


EDGES = _edges()


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    top = parts[1]
    if top == "suites":
        return "registry" if len(parts) == 2 else f"suite:{parts[2]}"
    if top in {"assaying", "assay"}:
        return "assay"
    if top in {"cli", "clitools", "__main__"}:
        return "cli"
    return top


def test_the_import_graph_is_read():
    """The graph this file checks is the real one (a broken reader would pass every rule)."""
    assert ("chemassay.suites.generation.api", "chemassay.contract.result") in {(a, b) for a, b, _ in EDGES}
    assert {_layer(m) for m in MODULES} >= set(SHARED) | {"assay", "cli", "root", "suite:generation"}


def test_the_contract_imports_nothing_of_chemassay():
    offences = [f"{a}:{line} imports {b}" for a, b, line in EDGES
                if _layer(a) == "contract" and _layer(b) != "contract"]
    assert not offences, offences


def test_suites_import_neither_the_assay_nor_the_cli_nor_each_other():
    offences = []
    for a, b, line in EDGES:
        if not _layer(a).startswith("suite:"):
            continue
        where = f"{a}:{line} imports {b}"
        if _layer(b) == "assay":
            offences.append(where)
        elif _layer(b) == "cli":
            own_cli = a.rsplit(".", 1)[-1].startswith("cli")
            helper = b == CLI_HELPERS[0] or (b.startswith(CLI_HELPERS[1]) and b in MODULES)
            if not (own_cli and helper):
                offences.append(where)
        elif _layer(b).startswith("suite:") and _layer(b) != _layer(a):
            offences.append(where)
    assert not offences, offences


def test_no_import_cycle_among_the_shared_layers():
    graph: dict[str, set[str]] = {layer: set() for layer in SHARED}
    why: dict[tuple[str, str], str] = {}
    for a, b, line in EDGES:
        la, lb = _layer(a), _layer(b)
        if la in graph and lb in graph and la != lb:
            graph[la].add(lb)
            why.setdefault((la, lb), f"{a}:{line} imports {b}")

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            layer = todo.pop()
            if layer == goal:
                return True
            if layer not in seen:
                seen.add(layer)
                todo += graph[layer]
        return False

    cycles = [f"{la} -> {lb} ({why[la, lb]}) and back" for la in graph for lb in graph[la] if reaches(lb, la)]
    assert not cycles, cycles


def test_the_contract_lists_every_public_name_of_its_modules():
    """``chemassay.contract`` re-exports (lazily) exactly the ``__all__`` of its modules."""
    import importlib

    import chemassay.contract as contract

    for module, names in contract._LAZY.items():
        listed = importlib.import_module(f"chemassay.contract.{module}").__all__
        assert sorted(names) == sorted(n for n in listed if n not in {"DetailsLookup", "ResultCheck"}), module
    assert all(getattr(contract, name) is not None for name in contract.__all__)
