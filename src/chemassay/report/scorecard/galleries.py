"""Failure galleries: RDKit depictions of what went wrong, read from the per-item data results
carry in their typed ``details``.

Each suite declares its gallery (``Suite.gallery``, a function ``(results, limit) -> Gallery``
in the suite's ``report`` module); this module holds what they share: the gallery's shape,
:func:`entry_gallery` (one item per entry of a list field) and the depiction helpers. A gallery
drawn from results that lack its fields says which field it needs (the report shows that line,
so a missing gallery is never silent).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chemassay.contract.result import Result
from chemassay.report.store import model_label

DEFAULT_LIMIT = 6


@dataclass
class Panel:
    """One picture (or text) in a gallery item."""

    label: str
    svg: str | None = None
    text: str | None = None
    """A string shown in monospace under (or instead of) the picture."""


@dataclass
class GalleryItem:
    """One failure: a caption and panels side by side, or aligned step pairs."""

    caption: str
    panels: list[Panel] = field(default_factory=list)
    steps: list[tuple[str, Panel | None, Panel | None]] = field(default_factory=list)
    """``(tag, gold panel, predicted panel)`` for mechanism alignments."""
    note: str = ""


@dataclass
class Gallery:
    """A suite's failure gallery, or the reason there is none."""

    suite: str
    title: str
    items: list[GalleryItem] = field(default_factory=list)
    missing: str | None = None
    """Why nothing is shown: the field the results would need."""


def result_field(result: Result, name: str) -> Any:
    """A field of a result's typed ``details`` (``None`` when it has no such field)."""
    details = result.details
    if details is not None and name in type(details).model_fields:
        value = getattr(details, name)
        if isinstance(value, list):
            return [item.model_dump() if hasattr(item, "model_dump") else item for item in value]
        return value.model_dump() if hasattr(value, "model_dump") else value
    return None


def model_name(result: Result) -> str:
    """The label a report gives the model of a result."""
    return model_label(result)


def entry_gallery(gallery: Gallery, results: list[Result], field_name: str, limit: int,
                   item_of: Callable[[Result, dict], GalleryItem | None], no_field: str, no_item: str) -> Gallery:
    """Fill ``gallery`` from the list field ``field_name`` of each result: ``item_of`` turns an
    entry into an item (``None``: not a failure to show), up to ``limit`` items; ``missing`` says
    why nothing is shown (``no_field``: no result has the field, ``no_item``: none qualified)."""
    has_field = False
    for result in results:
        entries = result_field(result, field_name)
        if not isinstance(entries, list):
            continue
        has_field = True
        for entry in entries:
            if len(gallery.items) >= limit:
                break
            item = item_of(result, entry) if isinstance(entry, dict) else None
            if item is not None:
                gallery.items.append(item)
    if not has_field:
        gallery.missing = no_field
    elif not gallery.items:
        gallery.missing = no_item
    return gallery


def suite_gallery(suite: str, results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery | None:
    """The failure gallery a suite declares (``Suite.gallery``; ``None`` for a suite without one)."""
    from chemassay.suites import find_suite

    declared = find_suite(suite)
    builder = declared.load("gallery") if declared is not None else None
    return builder(results, limit) if builder else None
