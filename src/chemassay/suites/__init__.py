"""The suite registry: every suite declares one :class:`Suite`, and everything that serves all
suites (the CLI, ``assay``, the demo, the model registry, the report, the data registry) asks
this registry instead of naming a suite.

A suite is a package with the same role files where the role exists: ``suite`` (its
:class:`Suite` declaration, importing nothing heavy), ``api`` (the library entry points,
re-exported as ``chemassay.<alias>``), ``cli`` (a Typer ``app``), ``metrics`` (its metric
functions and ``METRIC_CARDS``), ``baselines`` (its built-in models and ``MODEL_KINDS``),
``assay`` (its headline benchmark settings for ``chemassay assay``), ``published`` (how its
results meet the paper's published tables), ``report`` (its gallery and charts) and
``details`` (the typed per-suite fields of its results) and ``protocol`` (the
:class:`~chemassay.contract.Protocol` objects of what it asks a model). Suites import ``chem``, ``data``,
``models``, ``runtime`` and ``report``, never each other.

Adding a suite is one package plus one registration: list its declaration in
:data:`BUILTIN_SUITES`, call :func:`register_suite` at run time (a plugin, a test), or
publish it under the ``chemassay.suites`` entry-point group. The declaration names the heavy
parts as ``"module:attribute"`` strings, imported only when asked for (:meth:`Suite.load`),
so listing the suites imports neither torch nor typer.

The shared registries keep no copy of what the suites declare: they ask :func:`all_suites` on
every lookup, and keep what they built from it in a :class:`PerSuites`, which rebuilds when
the registered suites are no longer the same objects.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import operator
import sys
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Generic, TypeVar

from chemassay.contract.errors import ChemassayError, UserInputError
from chemassay.contract.hooks import set_details_lookup

BUILTIN_SUITES: tuple[str, ...] = (
    "chemassay.suites.stoichiometry.suite:SUITE",
    "chemassay.suites.reaction_ood.suite:SUITE",
    "chemassay.suites.generation.suite:SUITE",
    "chemassay.suites.robustness.suite:SUITE",
    "chemassay.suites.mechanism.suite:SUITE",
)
"""The declarations of the suites that ship with chemassay, in the order the CLI and the
reports show them."""

ENTRY_POINT_GROUP = "chemassay.suites"

T = TypeVar("T")


class DuplicateSuiteError(ChemassayError):
    """A suite name (or its module alias) registered twice."""


def resolve(target: str) -> Any:
    """The object a ``"package.module:attribute"`` string names (``"package.module"``: the module)."""
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    if not attribute:
        return module
    value: Any = module
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


@dataclass(frozen=True)
class Suite:
    """Everything chemassay knows about one suite (see the module docstring).

    Every ``"module:attribute"`` field is optional; a suite without a role simply lacks it
    (generation has no failure gallery, a toy suite may have no CLI).
    """

    name: str
    """The CLI name (``reaction-ood``), also the value of ``Result.suite``."""
    module: str
    """Its package (``chemassay.suites.reaction_ood``)."""
    title: str
    """The question it asks, in a few words (``does it generalize to new chemistry?``)."""
    reproduces: str
    """The paper it reproduces, short (``Bradshaw et al.``)."""
    protocols: tuple[str, ...]
    """The model protocols it asks a model for, headline first (``reaction-predictor``)."""
    api: str
    """The module of its library entry points, re-exported as ``chemassay.<alias>``."""
    alias: str = ""
    """The Python name: ``chemassay.<alias>`` (default: the name with ``-`` as ``_``)."""
    cli: str | None = None
    """``"module:app"``: its Typer app, mounted as ``chemassay <name>``."""
    metric_cards: str | None = None
    """``"module:METRIC_CARDS"``: the metric cards of every key its results carry."""
    model_kinds: str | None = None
    """``"module:MODEL_KINDS"``: its built-in baselines and learned models (registry kinds)."""
    model_protocols: str | None = None
    """``"module:PROTOCOLS"``: the :class:`~chemassay.contract.Protocol` objects it defines
    (its ``protocol.py``); the model registry asks for them, so every general model kind
    (``python:``, ``predictions:``, ``openai:``, ``hf:``) answers them."""
    datasets: str | None = None
    """``"module:DATASETS"``: the dataset specs it owns (registered with the data registry)."""
    dataset_names: tuple[str, ...] = ()
    """Datasets it reads (its own and shared ones), for ``chemassay data list --suite``."""
    assay: str | None = None
    """``"module:ASSAY"``: its :class:`chemassay.assaying.SuiteAssay` (headline settings, quick
    subset, data preparation) for ``chemassay assay``."""
    leakage: str | None = None
    """``"module:function"``: ``(quick, n_jobs) -> list[chemassay.leaks.TestSet]``, its headline
    test sets for ``chemassay leakage`` (loaded with its own loaders)."""
    published: str | None = None
    """``"module:PUBLISHED"``: its :class:`chemassay.report.published.PaperBinding` (the
    paper's tables shipped as JSON and how their columns map to this suite's metric keys)."""
    details: Mapping[str, str] = field(default_factory=dict)
    """Task → ``"module:Class"``: the typed ``Result.details`` of each task."""
    gallery: str | None = None
    """``"module:function"``: ``(results, limit) -> Gallery | None``, its failure gallery."""
    charts: str | None = None
    """``"module:function"``: ``(results, leaderboards) -> list[Figure]``, charts drawn from
    its results' data."""
    paper_table: str | None = None
    """``"module:SPEC"``: the :class:`chemassay.report.paper_tables.PaperTableSpec` of its paper's
    headline table (the report shows it first, the user's rows among the paper's)."""
    demo_notes: str | None = None
    """``"module:TEXT"``: what the demo's section says before its table (the baselines and
    what they show)."""

    def __post_init__(self) -> None:
        if not self.alias:
            object.__setattr__(self, "alias", self.name.replace("-", "_"))
        if not self.name or not all(c.isalnum() or c == "-" for c in self.name):
            raise ValueError(f"suite name {self.name!r}: letters, digits and '-' only")
        object.__setattr__(self, "details", dict(self.details))

    def load(self, role: str) -> Any:
        """The object a role field names (``suite.load("cli")`` → the Typer app); ``None``
        when the suite lacks that role."""
        target = getattr(self, role)
        if target is None:
            return None
        if not isinstance(target, str):
            raise TypeError(f"suite {self.name}: role {role!r} is not a 'module:attribute' string")
        return resolve(target)

    def details_model(self, task: str) -> type | None:
        """The typed details class of ``task`` (``None``: the task has no details)."""
        target = self.details.get(task)
        return resolve(target) if target else None

    def api_module(self) -> Any:
        """Its api module (``chemassay.<alias>``)."""
        return importlib.import_module(self.api)


_SUITES: dict[str, Suite] = {}
_ALIASES: dict[str, str] = {}
_lock = threading.RLock()
_state = {"loaded": False, "loading": False}


def register_suite(suite: Suite) -> Suite:
    """Add a suite; a name or alias already taken raises :class:`DuplicateSuiteError`."""
    with _lock:
        _ensure_loaded()
        _add(suite)
    return suite


def _add(suite: Suite) -> None:
    for key in {suite.name, suite.alias}:
        if key in _SUITES or key in _ALIASES:
            raise DuplicateSuiteError(f"suite {key!r} is already registered")
    if importlib.machinery.PathFinder.find_spec(f"{_PACKAGE}.{suite.alias}", [_PACKAGE_DIR]) is not None:
        raise DuplicateSuiteError(f"suite alias {suite.alias!r} is already a module of {_PACKAGE}")
    _SUITES[suite.name] = suite
    _ALIASES[suite.alias] = suite.name
    _expose_api(suite)


# ``import chemassay.<alias>`` gives the suite's api module without an import hook: the api
# module object itself is placed in sys.modules under both its own name and the alias, so the
# two names are one module (same classes, same state), and a plain import statement finds it
# there. So that registering the suites (at ``import chemassay``) costs no api import, the
# module is made with importlib.util.LazyLoader (the importlib docs' recipe for lazy imports):
# its code runs on first attribute use or on the first import statement that names it. This is
# also what gives a suite registered at run time (a plugin, a test) its ``chemassay.<alias>``.
_PACKAGE = __name__.rpartition(".")[0]
_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)


def _expose_api(suite: Suite) -> None:
    module = sys.modules.get(suite.api)
    if module is None:
        try:
            spec = importlib.util.find_spec(suite.api)
        except ImportError:  # its package is missing: chemassay.<alias> fails when asked, naming it
            spec = None
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[suite.api] = module
        spec.loader.exec_module(module)
        parent, _, child = suite.api.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
    sys.modules[f"{_PACKAGE}.{suite.alias}"] = module


def _withdraw_api(suite: Suite) -> None:
    alias = f"{_PACKAGE}.{suite.alias}"
    if sys.modules.get(alias) is sys.modules.get(suite.api):
        sys.modules.pop(alias, None)


def unregister_suite(name: str) -> None:
    """Remove a suite added with :func:`register_suite` (tests, plugins being reloaded)."""
    with _lock:
        suite = _SUITES.pop(name, None)
        if suite is not None:
            _ALIASES.pop(suite.alias, None)
            _withdraw_api(suite)


def _entry_point_suites() -> list[str]:
    try:
        found = entry_points(group=ENTRY_POINT_GROUP)
    except TypeError:  # Python < 3.10 signature; chemassay needs 3.10, kept for safety
        found = entry_points().get(ENTRY_POINT_GROUP, [])  # type: ignore[attr-defined]
    return [entry.value for entry in found]


def _ensure_loaded() -> None:
    if _state["loaded"] or _state["loading"]:
        return
    _state["loading"] = True
    try:
        for target in (*BUILTIN_SUITES, *_entry_point_suites()):
            suite = resolve(target)
            if not isinstance(suite, Suite):
                raise TypeError(f"{target} is not a chemassay.suites.Suite")
            if suite.name not in _SUITES:
                _add(suite)
        _state["loaded"] = True
    finally:
        _state["loading"] = False


def all_suites() -> list[Suite]:
    """Every registered suite, built-in ones first in their order, then the others."""
    with _lock:
        _ensure_loaded()
        return list(_SUITES.values())


class PerSuites(Generic[T]):
    """A value computed from the registered suites (``build(suites)``), kept while they stay
    the same: the shared registries (metric cards, published tables, datasets) ask the suite
    registry on every lookup and rebuild only when a suite was registered or removed since.

    The kept value is keyed by the identity of the registered :class:`Suite` objects, in order
    (a suite registered again, even an equal one, rebuilds), and by ``extra``: the state of the
    caller's own run-time additions (a counter its ``register`` functions move on), compared
    with ``==``. Two threads asking at once may both build; each gets a whole value.
    """

    def __init__(self, build: Callable[[tuple[Suite, ...]], T]) -> None:
        self._build = build
        self._held: tuple[tuple[Suite, ...], Hashable, T] | None = None

    def get(self, extra: Hashable = None) -> T:
        """The value for the suites registered now (built again if they changed)."""
        suites = tuple(all_suites())
        held = self._held
        if (held is not None and held[1] == extra and len(held[0]) == len(suites)
                and all(map(operator.is_, held[0], suites))):
            return held[2]
        value = self._build(suites)
        self._held = (suites, extra, value)
        return value

    def clear(self) -> None:
        """Forget the kept value (the next :meth:`get` builds)."""
        self._held = None


def suite_names() -> list[str]:
    """The CLI names of every registered suite."""
    return [suite.name for suite in all_suites()]


def find_suite(name: str) -> Suite | None:
    """The suite called ``name`` (CLI name or alias: ``reaction-ood`` or ``reaction_ood``)."""
    with _lock:
        _ensure_loaded()
        key = _ALIASES.get(name, name)
        return _SUITES.get(key) or _SUITES.get(name.replace("_", "-"))


def _details_class(name: str, task: str) -> type:
    """The details class a result of ``name``/``task`` is validated with (the contract asks)."""
    suite = find_suite(name)
    if suite is None:
        raise ValueError(f"details given for unknown suite {name!r}")
    model = suite.details_model(task)
    if model is None:
        raise ValueError(f"suite {suite.name} declares no details for task {task!r}")
    return model


set_details_lookup(_details_class)


def get_suite(name: str) -> Suite:
    """The suite called ``name``; an unknown name is a one-line error listing the suites."""
    suite = find_suite(name)
    if suite is None:
        raise UserInputError(f"unknown suite {name!r}; suites: {', '.join(suite_names())}")
    return suite


def suite_module(name: str) -> str:
    """The Python alias of a suite given its CLI name or alias (``reaction-ood`` → ``reaction_ood``)."""
    return get_suite(name).alias


__all__ = [
    "BUILTIN_SUITES", "DuplicateSuiteError", "PerSuites", "Suite", "all_suites", "find_suite", "get_suite",
    "register_suite", "resolve", "suite_module", "suite_names", "unregister_suite",
]
