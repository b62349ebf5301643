"""The suite registry's cache for the shared registries (PerSuites): kept while the registered
suites stay the same objects, rebuilt when one comes, goes or is replaced by an equal copy."""

from __future__ import annotations

import dataclasses

from chemassay.suites import PerSuites, all_suites, register_suite, unregister_suite


def test_a_value_is_kept_until_the_suites_change(toy_suite):
    builds: list[tuple[str, ...]] = []

    def names(suites):
        builds.append(tuple(s.name for s in suites))
        return builds[-1]

    cache = PerSuites(names)
    assert cache.get() == tuple(s.name for s in all_suites()) and "formula" in cache.get()
    assert len(builds) == 1
    assert cache.get(extra=1) == builds[0] and len(builds) == 2  # the caller's own state is part of the key
    unregister_suite("formula")
    assert "formula" not in cache.get(extra=1) and len(builds) == 3
    register_suite(dataclasses.replace(toy_suite))  # an equal suite, but another object: rebuilt
    assert "formula" in cache.get(extra=1) and len(builds) == 4
    unregister_suite("formula")
    register_suite(toy_suite)  # the fixture unregisters it again
    cache.get(extra=1)
    cache.clear()
    cache.get(extra=1)
    assert len(builds) == 6
