"""The options every suite's ``evaluate`` takes, under one name each (:class:`Options`).

A suite's ``evaluate(model=..., reference=..., ...)`` takes its own arguments (what the suite
alone means: a variant, a split, top-k) plus these, either as one ``options=Options(...)``
object or as keyword arguments of the same names (``seed=1, bootstrap=0``), which
:meth:`Options.merged` folds into one object so the body reads ``options.seed``.

>>> Options.merged(None, seed=3).seed, Options().bootstrap
(3, 1000)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any


@dataclass(frozen=True)
class Options:
    """Common evaluation options (see the module docstring)."""

    seed: int = 0
    """Seed of every random choice (bootstrap resamples, subsets, sampling)."""
    bootstrap: int = 1000
    """Bootstrap resamples of each interval (0: no intervals)."""
    limit: int | None = None
    """Score only the first ``limit`` items (``None``: all)."""
    n_jobs: int = 1
    """Worker processes for the scoring (and for models that use them)."""
    cache: bool = False
    """Answer items asked before from the run pipeline's response cache."""
    progress: bool = False
    """Report progress through the progress renderer."""
    out: str | os.PathLike | None = None
    """Where the model's outputs are written (predictions, samples, per-item answers)."""
    context: Mapping[str, Any] = field(default_factory=dict)
    """Settings handed to a model kind when a spec is loaded (``device``, ``base_url``...)."""

    @classmethod
    def merged(cls, options: Options | None = None, **given: Any) -> Options:
        """``options`` (default: the defaults) with the keyword arguments that are not ``None``
        laid over it; an unknown name is a :class:`TypeError` naming the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise TypeError(f"unknown option(s) {unknown}; options are {sorted(known)}")
        return replace(options or cls(), **{k: v for k, v in given.items() if v is not None})
