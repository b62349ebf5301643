"""Result schema, result files and report rendering."""

from chemassay.contract.result import (
    DatasetRef,
    InputRef,
    Result,
    SkippedItem,
    Timer,
    current_versions,
    input_ref,
    read_result,
)

__all__ = [
    "DatasetRef",
    "InputRef",
    "Result",
    "SkippedItem",
    "Timer",
    "current_versions",
    "input_ref",
    "read_result",
]
