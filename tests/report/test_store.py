"""The results store: identity and latest runs, filters, concurrent writers, interrupted writers,
corrupted files, the emit hook and the ``results`` commands."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from chemassay.contract.result import DatasetRef, InputRef, Result
from chemassay.report.store import (
    Filters,
    ResultStore,
    StoreError,
    parse_since,
    record,
    result_key,
    set_recording,
)


def _result(em: float, *, model_file="pred-a.txt", split="test_in", n_jobs=1, suite="stoichiometry") -> Result:
    return Result(suite=suite, task="score", metrics={"EM": em, "JAC": 0.5}, n=10,
                  dataset=DatasetRef(name="uspto-15k/smiles_t2_x1", sha256="d" * 64),
                  inputs=[InputRef(path=model_file, sha256=model_file.encode().hex().ljust(64, "0")[:64])],
                  config={"split": split, "n_jobs": n_jobs, "predictions_built_s": 1.5})


def test_identity_ignores_volatile_config_and_keeps_history(store_home):
    assert result_key(_result(0.1, n_jobs=1)) == result_key(_result(0.9, n_jobs=8))
    assert result_key(_result(0.1)) != result_key(_result(0.1, split="test_out"))
    assert result_key(_result(0.1)) != result_key(_result(0.1, model_file="pred-b.txt"))
    with ResultStore() as store:
        first = store.add(_result(0.1))
        second = store.add(_result(0.2, n_jobs=4))  # same evaluation, new run
        other = store.add(_result(0.3, split="test_out"))
        latest = store.list()
        assert [run.id for run in latest] == [other, second]
        assert [run.id for run in store.list(Filters(all_runs=True))] == [other, second, first]
        assert store.get(first).metrics["EM"] == 0.1 and store.get(second).metrics["EM"] == 0.2
        # removing the latest run promotes the previous run of that evaluation
        assert store.remove(Filters(ids=[second], all_runs=True)) == 1
        assert sorted(run.id for run in store.list()) == [first, other]
        assert store.check() == []


def test_filters(store_home):
    with ResultStore() as store:
        a = store.add(_result(0.1, model_file="alpha-preds.txt"))
        b = store.add(_result(0.2, model_file="beta-preds.txt", split="test_out"))
        c = store.add(Result(suite="generation", task="evaluate", metrics={"valid": 0.9}, n=3,
                             dataset=DatasetRef(name="moses", sha256="e" * 64)))
        store.connection().execute("UPDATE results SET created_at = ? WHERE id = ?", (time.time() - 10 * 86400, a))
        assert {r.id for r in store.list(Filters(suite="stoichiometry"))} == {a, b}
        assert {r.id for r in store.list(Filters(suite="generation", task="evaluate"))} == {c}
        assert {r.id for r in store.list(Filters(model="BETA"))} == {b}
        assert {r.id for r in store.list(Filters(dataset="moses"))} == {c}
        assert {r.id for r in store.list(Filters(dataset="ddd"))} == {a, b}  # sha256 prefix
        assert {r.id for r in store.list(Filters(since=parse_since("7d")))} == {b, c}
        assert store.count(Filters(suite="stoichiometry")) == 2


def test_parse_since():
    now = 1_800_000_000.0
    assert parse_since("12h", now) == now - 12 * 3600 and parse_since("2w", now) == now - 14 * 86400
    assert parse_since("2026-11-01") > 0
    from chemassay.contract.errors import UserInputError

    with pytest.raises(UserInputError, match="--since 'yesterday'"):
        parse_since("yesterday")


# Writers run as separate Python processes (a subprocess, not multiprocessing: the test
# module itself need not be importable in the child).
WRITER = """
import sys
from chemassay.contract.result import DatasetRef, InputRef, Result
from chemassay.report.store import ResultStore

path, count, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
store = ResultStore(path)
i = 0
while count < 0 or i < count:
    name = f"writer-{tag}-{i}.txt"
    store.add(Result(suite="stoichiometry", task="score", metrics={"EM": 0.5, "JAC": 0.5}, n=10,
                     dataset=DatasetRef(name="uspto-15k/smiles_t2_x1", sha256="d" * 64),
                     inputs=[InputRef(path=name, sha256=name.encode().hex().ljust(64, "0")[:64])]))
    i += 1
store.close()
"""


def _start_writer(path: str, count: int, tag: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, path, str(count), tag], env=dict(os.environ))


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = str(tmp_path / "results.sqlite")
    ResultStore(path).connection()  # create it first; both writers then race on inserts
    workers = [_start_writer(path, 60, tag) for tag in ("a", "b")]
    for worker in workers:
        assert worker.wait(120) == 0
    with ResultStore(path) as store:
        runs = store.list(Filters(all_runs=True))
        assert len(runs) == 120 and len({r.key for r in runs}) == 120
        assert store.check() == []


def test_a_killed_writer_leaves_no_half_written_row(tmp_path):
    path = str(tmp_path / "results.sqlite")
    ResultStore(path).connection()
    for round_ in range(3):
        worker = _start_writer(path, -1, f"endless{round_}")
        deadline = time.monotonic() + 60
        with ResultStore(path) as store:
            start = store.count(Filters(all_runs=True))
            while store.count(Filters(all_runs=True)) < start + 20 and time.monotonic() < deadline:
                assert worker.poll() is None, "the writer died on its own"
                time.sleep(0.05)
        os.kill(worker.pid, signal.SIGKILL)  # mid-transaction, most likely
        worker.wait(30)
    with ResultStore(path) as store:
        assert store.check() == []  # integrity check passes and every stored body matches its sha256
        runs = store.list(Filters(all_runs=True))
        assert len(runs) >= 60
        assert all(store.get(run.id).metrics["EM"] == 0.5 for run in runs)


def test_corrupted_or_foreign_database_is_reported_and_never_overwritten(tmp_path):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database at all" * 50)
    before = garbage.read_bytes()
    with pytest.raises(StoreError) as caught:
        ResultStore(garbage).add(_result(0.1))
    message = str(caught.value)
    assert "not an SQLite database" in message and str(garbage) in message and "\n" not in message
    assert garbage.read_bytes() == before

    # a real results store whose pages were damaged after the header
    damaged = tmp_path / "damaged.sqlite"
    with ResultStore(damaged) as store:
        for i in range(50):
            store.add(_result(i / 50, model_file=f"f{i}.txt"))
    with sqlite3.connect(damaged) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(damaged.read_bytes())
    data[4096:len(data) - 100] = os.urandom(len(data) - 4196)
    damaged.write_bytes(bytes(data))
    before = damaged.read_bytes()
    with pytest.raises(StoreError, match="damaged results database|not a chemassay results store"):
        with ResultStore(damaged) as store:
            store.add(_result(0.9))
            store.list()
    assert damaged.read_bytes() == before

    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(StoreError, match="not a chemassay results store \\(tables: customers\\)"):
        ResultStore(foreign).list()

    newer = tmp_path / "newer.sqlite"
    with ResultStore(newer) as store:
        store.add(_result(0.1))
        store.connection().execute("UPDATE meta SET value = '99' WHERE name = 'schema'")
    with pytest.raises(StoreError, match="schema 99 is newer"):
        ResultStore(newer).list()


def test_a_tampered_row_is_reported_not_returned(store_home):
    with ResultStore() as store:
        run = store.add(_result(0.1))
        store.connection().execute("UPDATE bodies SET body = ? WHERE id = ?", (b"xx", run))
        with pytest.raises(StoreError, match=f"stored result {run} does not match its checksum"):
            store.get(run)
        assert any("does not match its checksum" in problem for problem in store.check())


def test_recording_switches(store_home, monkeypatch):
    assert record(_result(0.1)) is not None
    set_recording(False)
    try:
        assert record(_result(0.2)) is None
    finally:
        set_recording(True)
    monkeypatch.setenv("CHEMASSAY_NO_STORE", "1")
    assert record(_result(0.3)) is None
    with ResultStore() as store:
        assert store.count(Filters(all_runs=True)) == 1
