"""Dataset registry, fetching/caching, and readers for the on-disk formats."""

from chemassay.data.registry import (
    DataFile,
    DatasetSpec,
    chemassay_home,
    dataset_file,
    fetch,
    get_spec,
    list_specs,
    locate,
    register,
    verify,
)

__all__ = [
    "DataFile",
    "DatasetSpec",
    "chemassay_home",
    "dataset_file",
    "fetch",
    "get_spec",
    "list_specs",
    "locate",
    "register",
    "verify",
]
