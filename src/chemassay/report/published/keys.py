"""What every suite's mapping of a paper's columns shares.

A suite says how its paper's printed tables meet its metric keys in its ``published`` module
(a :class:`~chemassay.report.published.PaperBinding`): a function from a column of a published
table (the paper's metric name plus the column's setting, e.g. ``Acc@1`` with
``augmentation=canon``) to the key a chemassay result carries (``canonical/o2a_acc@1``), or
``None`` when chemassay computes no such metric. A mapping may *consume* setting entries that
became part of the key (the augmentation above), so they no longer distinguish published rows.

A user's result states its own setting in the same vocabulary (``Result.setting``), so no
translation is needed on that side.

Units: papers print percentages where chemassay stores fractions; :func:`to_chemassay_units`
converts (a binding lists the keys it stores in percent).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mapped:
    """A chemassay metric key, and the setting names that were folded into it."""

    key: str
    consumes: tuple[str, ...] = ()


def to_chemassay_units(value: float | None, column_unit: str, key: str | None,
                       percent_keys: frozenset[str] = frozenset()) -> float | None:
    """A printed number in chemassay's unit for ``key`` (percent → fraction unless ``key``
    is stored in percent)."""
    if value is None:
        return None
    if column_unit == "percent" and key not in percent_keys:
        # round away the binary noise of the division (90.4 / 100 is 0.9040000000000001)
        return round(value / 100.0, 12)
    return value
