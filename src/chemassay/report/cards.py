"""Metric cards: every metric key a result can carry, declared once.

A card says what a metric means, whether higher or lower is better, its range, the paper's
own name and table for it, and how its uncertainty is reported. Each suite declares its
cards in its ``metrics`` module (``Suite.metric_cards``); :func:`all_cards` collects them.
A card's ``key`` is either a literal key (``S_total``) or a pattern with placeholders in
braces: ``{k}`` (and ``{n}``) match a whole number, any other ``{name}`` matches one
``/``-free segment. So ``{augmentation}/{direction}_acc@{k}`` declares
``explicit_h/o2a_acc@1`` and every key of its shape.

:func:`card_for` finds the card of a key (a literal card wins over a pattern; among patterns
the most specific wins) and :func:`undeclared_keys` lists the keys of a result that no card
declares — the test suite fails on any.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from chemassay.suites import PerSuites, Suite, find_suite, suite_names

DIRECTIONS = ("higher", "lower", "none")
INTERVAL_METHODS = ("wilson", "bootstrap", "bootstrap-molecules", "none")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NUMERIC_PLACEHOLDERS = {"k", "n"}


@dataclass(frozen=True)
class MetricCard:
    """One metric's declaration (see the module docstring)."""

    key: str
    suite: str
    description: str
    direction: str
    """``higher`` or ``lower`` is better; ``none`` for counts and descriptive values."""
    range: tuple[float | None, float | None] = (0.0, 1.0)
    paper_name: str | None = None
    """What the paper calls it (``Top-1``, ``FCD/Test``, ``Acc@1``...)."""
    paper_table: str | None = None
    """Where the paper reports it (``Table 2``, ``Table S2.2``...)."""
    interval: str = "none"
    """How its 95 % interval is obtained (:mod:`chemassay.report.intervals`): ``wilson`` for a
    proportion (every per-item value 0 or 1), ``bootstrap`` (percentile bootstrap over items) for
    another mean over items, ``bootstrap-molecules`` (resampling generated molecules), or ``none``
    (with the reason in ``interval_note``)."""
    interval_note: str = ""
    short: str = ""
    """A short column label for tables (defaults to the key)."""
    by_construction: tuple[tuple[str, str], ...] = ()
    """``(model kind, reason)`` pairs: a model of that kind (``ModelRef.kind``) has this metric's
    value by construction, not by skill — the ``fingerprint`` encoder's AMORE retrieval
    (canonical fingerprints are computed from the graph, the same for every rewrite), the
    ``gold-oracle``'s oMeS. The scorecard shows such a value with a mark (†) and the reason, and
    never ranks it (no ★, and it does not stand in the way of another row's ★)."""
    computed_on: Callable[[Any, str], int | None] | None = field(default=None, compare=False)
    """``(result, key) → items``: how many items a result's value of ``key`` was computed on when
    that is fewer than the key names (``unique@10000`` of 7,255 valid molecules), else ``None``;
    the scorecard labels the value with it."""

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"metric card {self.key!r}: direction must be one of {DIRECTIONS}, got {self.direction!r}")
        if self.interval not in INTERVAL_METHODS:
            raise ValueError(f"metric card {self.key!r}: unknown interval method {self.interval!r}")

    @property
    def is_pattern(self) -> bool:
        """Whether the key has placeholders."""
        return bool(_PLACEHOLDER.search(self.key))

    @property
    def label(self) -> str:
        """The short label, or the key."""
        return self.short or self.key

    @property
    def arrow(self) -> str:
        """``↑`` (higher is better), ``↓`` (lower is better) or empty."""
        return {"higher": "↑", "lower": "↓"}.get(self.direction, "")

    def pattern(self) -> re.Pattern[str]:
        """The compiled regular expression of the key."""
        return _compile(self.key)

    def matches(self, key: str) -> bool:
        """Whether ``key`` is declared by this card."""
        if not self.is_pattern:
            return key == self.key
        return self.pattern().fullmatch(key) is not None

    def construction(self, kind: str | None) -> str | None:
        """The reason a model of ``kind`` has this metric's value by construction (``None``: it has not)."""
        return next((reason for declared, reason in self.by_construction if declared == kind), None)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``chemassay metrics list --json``)."""
        return {
            "key": self.key, "suite": self.suite, "description": self.description, "direction": self.direction,
            "range": list(self.range), "paper_name": self.paper_name, "paper_table": self.paper_table,
            "interval": self.interval, "interval_note": self.interval_note, "short": self.short or None,
            "by_construction": dict(self.by_construction),
        }


@cache
def _compile(key: str) -> re.Pattern[str]:
    parts: list[str] = []
    position = 0
    for match in _PLACEHOLDER.finditer(key):
        parts.append(re.escape(key[position:match.start()]))
        parts.append(r"\d+" if match.group(1) in _NUMERIC_PLACEHOLDERS else r"[^/]+?")
        position = match.end()
    parts.append(re.escape(key[position:]))
    return re.compile("".join(parts))


def _specificity(card: MetricCard) -> int:
    return len(_PLACEHOLDER.sub("", card.key))


_EXTRA: list[MetricCard] = []
_extra_version = [0]
"""Moves on with every :func:`register_cards` / :func:`unregister_cards` (part of the cache key)."""


def register_cards(cards: list[MetricCard] | tuple[MetricCard, ...]) -> None:
    """Declare further cards at run time (a plugin suite); a duplicate key is an error."""
    existing = {(c.suite, c.key) for c in all_cards()}
    for card in cards:
        if (card.suite, card.key) in existing:
            raise ValueError(f"metric card {card.suite}:{card.key} is already declared")
        existing.add((card.suite, card.key))
    _EXTRA.extend(cards)
    _extra_version[0] += 1


def unregister_cards(cards: list[MetricCard] | tuple[MetricCard, ...]) -> None:
    """Withdraw cards declared by :func:`register_cards` (tests that declare cards for a while)."""
    for card in cards:
        if card in _EXTRA:
            _EXTRA.remove(card)
    _extra_version[0] += 1


def _collect(suites: tuple[Suite, ...]) -> dict[str, tuple[MetricCard, ...]]:
    """Suite name → its cards: each suite's declared ones, then those registered at run time."""
    found: dict[str, list[MetricCard]] = {}
    for suite in suites:
        cli_name = suite.name
        cards = list(suite.load("metric_cards") or ())
        wrong = [c.key for c in cards if c.suite != cli_name]
        if wrong:
            raise ValueError(f"{suite.metric_cards} declares cards of another suite: {wrong[:5]}")
        keys = [c.key for c in cards]
        duplicated = sorted({k for k in keys if keys.count(k) > 1})
        if duplicated:
            raise ValueError(f"suite {cli_name}: metric cards declared twice: {duplicated}")
        found[cli_name] = cards
    for card in _EXTRA:
        found.setdefault(card.suite, []).append(card)
    return {suite: tuple(cards) for suite, cards in found.items()}


_CARDS: PerSuites[dict[str, tuple[MetricCard, ...]]] = PerSuites(_collect)
"""The cards are asked of the registered suites; kept until a suite or a run-time card comes
or goes (a report looks up every metric key of every result)."""


def _by_suite() -> dict[str, tuple[MetricCard, ...]]:
    return _CARDS.get(_extra_version[0])


def all_cards(suite: str | None = None) -> list[MetricCard]:
    """Every declared card (of one suite if ``suite`` is given), in declaration order."""
    table = _by_suite()
    if suite is not None:
        suite = suite.replace("_", "-")
        if suite not in table:
            if find_suite(suite) is None:
                raise KeyError(f"unknown suite {suite!r}; suites: {', '.join(suite_names())}")
            return []
        return list(table[suite])
    return [card for cards in table.values() for card in cards]


def card_for(suite: str, key: str) -> MetricCard | None:
    """The card declaring ``key`` in ``suite`` (literal first, then the most specific pattern)."""
    cards = all_cards(suite)
    for card in cards:
        if not card.is_pattern and card.key == key:
            return card
    patterns = sorted((c for c in cards if c.is_pattern), key=_specificity, reverse=True)
    return next((card for card in patterns if card.matches(key)), None)


def undeclared_keys(suite: str, metrics: dict[str, Any]) -> list[str]:
    """Keys of ``metrics`` that no card of ``suite`` declares (should be empty)."""
    return [key for key in metrics if card_for(suite, key) is None]


def direction_of(suite: str, key: str) -> str:
    """``higher``, ``lower`` or ``none`` for a metric key (``none`` if undeclared)."""
    card = card_for(suite, key)
    return card.direction if card else "none"


def by_construction(result: Any, key: str) -> str | None:
    """Why ``result``'s value of ``key`` is fixed by construction (its model's kind is declared on
    the metric's card: :attr:`MetricCard.by_construction`), or ``None``."""
    model = getattr(result, "model", None)
    if model is None:
        return None
    try:
        card = card_for(result.suite, key)
    except KeyError:
        return None
    return card.construction(model.kind) if card is not None else None
