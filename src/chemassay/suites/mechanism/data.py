"""The mechanism suite's datasets: oMeBench's oMe-Gold and oMe-Template, named through the
dataset registry (``chemassay.data``).

The registry owns every name: ``omebench`` (alias ``ome``) with the parts ``gold`` and
``templates``, and the part aliases ``gold``/``ome-gold`` and ``template``/``templates``/
``ome-template``. :func:`load_omebench` is the loader the catalog names, so
``chemassay.load_dataset("gold")`` returns the 196 oMe-Gold reactions.

Wherever the suite takes a reaction file (the CLI's ``GOLD`` argument, ``evaluate(reference=...)``,
a k-shot ``pool``), :func:`reactions_path` accepts a registered name or a file path; a
registered name wins over a file of the same name in the working folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.data.registry import alias_part, dataset_file, get_spec
from chemassay.suites.mechanism.records import load_reactions

DATASET = "omebench"
PART_FILES = {"gold": "oMe_Gold.json", "templates": "oMe_Template.json"}
DEFAULT_PART = "gold"


def omebench_file(part: str = DEFAULT_PART) -> Path:
    """Path of the bundled file of an oMeBench part (``gold`` or ``templates``, or an alias)."""
    spec = get_spec(DATASET)
    name = alias_part(part) or part
    if name not in PART_FILES or name not in spec.parts:
        raise UserInputError(f"oMeBench has no part {part!r}; parts: {', '.join(spec.parts)}")
    return dataset_file(spec.name, PART_FILES[name])


def dataset_part(name: str) -> str | None:
    """The oMeBench part a registered name stands for (``gold``, ``template``, ``omebench``,
    ``omebench:templates``...), or ``None`` when ``name`` is not an oMeBench name."""
    from chemassay.data.registry import alias_part, is_dataset_name, resolve_name

    base, _, part = name.partition(":")
    if not is_dataset_name(base) or resolve_name(base) != DATASET:
        return None
    if part:
        return alias_part(part) or part
    return alias_part(base) or DEFAULT_PART


def reactions_path(source: str | os.PathLike) -> Path:
    """The file behind a reaction source: a registered oMeBench name (see the module doc)
    or a path. A missing file is a one-line :class:`UserInputError`."""
    if isinstance(source, str):
        part = dataset_part(source)
        if part is not None:
            return omebench_file(part)
    target = Path(source)
    if not target.exists():
        raise UserInputError(
            f"{target}: no such oMeBench file (give a path, or a dataset name: gold, template, omebench:PART)"
        )
    if target.is_dir():
        raise UserInputError(f"{target}: is a directory, expected an oMeBench JSON / JSONL file")
    return target


def load_omebench(name: str = DATASET, part: str | None = None, *, records: bool = False, **options: Any):
    """Loader of the ``omebench`` dataset (``chemassay.load_dataset``).

    Returns the part's reactions as :class:`~chemassay.suites.mechanism.records.Reaction`
    objects (``part`` defaults to ``gold``), or the raw oMeBench JSON objects with
    ``records=True`` (every record, including those scoring cannot use, as the templates
    have). Unknown options are an error.
    """
    if options:
        raise UserInputError(f"load_dataset({name!r}): unknown option(s) {', '.join(sorted(options))}; it takes part, records")
    path = omebench_file(part or DEFAULT_PART)
    if records:
        from chemassay.suites.mechanism.records import read_records

        return [source.data for source in read_records(path).records]

    return load_reactions(path).reactions
