"""The one cache: checked entries are used, damaged or wrong ones are reported and rebuilt."""

import json
import threading

import numpy as np
import pytest

from chemassay.runtime.cache import CacheEntry, KeyValueStore, cached, cached_file


def _save(value, path):
    # np.save appends .npy to names without it (the temporary file has none): use a handle.
    with open(path, "wb") as handle:
        np.save(handle, value, allow_pickle=False)


def _load(path):
    return np.load(path, allow_pickle=False)


def test_built_once_then_loaded(isolated_home):
    calls = []

    def build():
        calls.append(1)
        return np.arange(5.0)

    key = {"input": "abc", "setting": 2}
    first = cached("test", key, build, save=_save, load=_load, suffix=".npy")
    second = cached("test", dict(reversed(list(key.items()))), build, save=_save, load=_load, suffix=".npy")
    assert calls == [1] and first.tolist() == second.tolist()
    entry = CacheEntry("test", key, ".npy")
    meta = json.loads(entry.meta_path.read_text())
    assert meta["key"] == key and len(meta["sha256"]) == 64 and entry.valid()


@pytest.mark.parametrize("damage", ["truncate", "wrong-values", "drop-meta", "garbage"])
def test_damaged_entries_are_rebuilt_never_used(isolated_home, logged, damage):
    key = {"input": damage}
    cached("test", key, lambda: np.full(100, 8.6), save=_save, load=_load, suffix=".npy")
    entry = CacheEntry("test", key, ".npy")
    if damage == "truncate":
        entry.path.write_bytes(entry.path.read_bytes()[:50])
    elif damage == "wrong-values":  # a valid file holding other numbers (FCD 1056 instead of 8.6)
        with open(entry.path, "wb") as handle:
            np.save(handle, np.full(100, 1056.0))
    elif damage == "drop-meta":
        entry.meta_path.unlink()
    else:
        entry.path.write_bytes(b"PK\x03\x04 not a zip")
    value = cached("test", key, lambda: np.full(100, 8.6), save=_save, load=_load, suffix=".npy")
    assert value.tolist() == [8.6] * 100
    err = logged.read()
    assert err.count("\n") == 0 and "rebuilding" in err and str(entry.path) in err  # one message
    assert entry.valid()


def test_cached_file_and_disabled_cache(isolated_home, monkeypatch):
    path = cached_file("files", {"x": 1}, lambda p: p.write_text("hello"), suffix=".txt")
    assert path.read_text() == "hello" and CacheEntry("files", {"x": 1}, ".txt").valid()
    monkeypatch.setenv("CHEMASSAY_NO_CACHE", "1")
    calls = []
    cached("test", {"y": 1}, lambda: calls.append(1) or np.zeros(1), save=_save, load=_load)
    cached("test", {"y": 1}, lambda: calls.append(1) or np.zeros(1), save=_save, load=_load)
    assert len(calls) == 2


def test_key_value_store_checks_rows_and_survives_a_corrupt_database(isolated_home, logged):
    store = KeyValueStore("responses")
    store.put("a", {"text": "CCO"})
    assert store.get("a") == {"text": "CCO"} and store.get("b") is None
    store._connect().execute("UPDATE entries SET value = ? WHERE key = 'a'", (json.dumps({"text": "XX"}),))
    assert store.get("a") is None and "fails its checksum" in logged.read()
    path = store.path
    store.close()
    path.write_bytes(b"this is not a database" * 100)
    fresh = KeyValueStore("responses")
    fresh.put("k", 1)
    assert fresh.get("k") == 1
    assert "not a readable database" in logged.read()
    assert list(path.parent.glob("responses.sqlite.corrupt-*"))


def test_key_value_store_from_many_threads(isolated_home):
    store = KeyValueStore("threads")

    def work(offset):
        for i in range(50):
            store.put(f"{offset}-{i}", i)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store) == 200

