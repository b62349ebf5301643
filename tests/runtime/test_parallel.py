import math
import os

import pytest

from chemassay.chem import canonical_smiles
from chemassay.runtime import Failure, atomic_write_text, atomic_writer, parallel_map, sha256_file
from support.signals import sigint_by_default
from support.workers import crash_on_negative, self_similarity_sum, slow_on_seven


def test_serial_map_keeps_order_and_captures_failures():
    results = parallel_map(canonical_smiles, ["OCC", "C1CC", "c1ccccc1"], n_jobs=1)
    assert results[0] == "CCO" and results[2] == "c1ccccc1"
    assert isinstance(results[1], Failure)
    assert results[1].index == 1 and results[1].error_type == "InvalidSmiles"
    assert "syntax" in results[1].message


def test_process_pool_matches_serial():
    items = ["OCC", "C1CC", "CCN", "c1ccncc1", "C(C)(C)(C)(C)C"] * 20
    serial = parallel_map(canonical_smiles, items, n_jobs=1)
    parallel = parallel_map(canonical_smiles, items, n_jobs=2, chunk_size=7)
    assert [str(r) for r in serial] == [str(r) for r in parallel]
    assert sum(isinstance(r, Failure) for r in parallel) == 40
    assert [r.index for r in parallel if isinstance(r, Failure)] == [i for i, s in enumerate(items) if s in ("C1CC", "C(C)(C)(C)(C)C")]


def test_dask_backend_in_process():
    pytest.importorskip("distributed")
    results = parallel_map(math.sqrt, [4.0, -1.0, 9.0], scheduler="dask-local", chunk_size=1)
    assert results[0] == 2.0 and results[2] == 3.0
    assert isinstance(results[1], Failure) and results[1].error_type == "ValueError"


def test_atomic_write_leaves_old_file_on_error(tmp_path):
    target = tmp_path / "out.txt"
    atomic_write_text(target, "first")
    with pytest.raises(RuntimeError):
        with atomic_writer(target) as handle:
            handle.write("half")
            raise RuntimeError("crash")
    assert target.read_text() == "first"
    assert os.listdir(tmp_path) == ["out.txt"]
    assert sha256_file(target) == "a7937b64b8caa58f03721bb6bacf5c78cb235febe0e70b1b84cd99541461a08e"


def test_atomic_write_gives_the_usual_file_mode(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "shared.txt", "x")
        assert (tmp_path / "shared.txt").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(umask)


def test_workers_can_use_torch_after_the_parent_did():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(2)
    assert self_similarity_sum(0) == 64.0  # the parent's torch thread pool is now running
    results = parallel_map(self_similarity_sum, [1, 2, 3, 4], n_jobs=2, chunk_size=1)
    assert results == [64.0, 64.0, 64.0, 64.0]


def test_a_crashing_item_is_isolated_and_the_rest_computed():
    items = [1, 2, -1, 3, 4, 5]
    results = parallel_map(crash_on_negative, items, n_jobs=2, chunk_size=2)
    assert [r for r in results if not isinstance(r, Failure)] == [2, 4, 6, 8, 10]
    assert isinstance(results[2], Failure) and results[2].error_type == "WorkerCrashed" and results[2].index == 2


def test_an_item_over_the_time_limit_is_a_failure():
    import time

    started = time.perf_counter()
    results = parallel_map(slow_on_seven, [5, 6, 7, 8], n_jobs=2, chunk_size=1, item_timeout=1.0)
    assert results[:2] == [5, 6] and results[3] == 8
    assert isinstance(results[2], Failure) and results[2].error_type == "TimedOut"
    assert time.perf_counter() - started < 30


def test_ctrl_c_stops_a_pool_within_seconds(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "run.py"
    script.write_text(
        "import time\n"
        "from chemassay.runtime.parallel import parallel_map\n"
        "def slow(x):\n    time.sleep(30)\n    return x\n"
        "if __name__ == '__main__':\n"
        "    print('started', flush=True)\n"
        "    try:\n        parallel_map(slow, list(range(8)), n_jobs=2, chunk_size=1)\n"
        "    except KeyboardInterrupt:\n        print('interrupted', flush=True)\n        raise SystemExit(130)\n"
    )
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                               preexec_fn=sigint_by_default)
    assert process.stdout.readline().strip() == "started"
    time.sleep(1.5)
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=20)
    assert code == 130 and time.perf_counter() - sent < 5
    assert process.stdout.read().strip() == "interrupted"


def test_workers_from_an_unguarded_script_are_refused_at_once_with_the_fix(tmp_path):
    """A plain script that starts worker processes (spawn, or the fork server once torch is
    imported) at its top level would be re-run by every worker: one line naming the script,
    the line and the fix, at once; the guarded script works."""
    import subprocess
    import sys
    import time

    body = ("import multiprocessing\n"
            "multiprocessing.set_start_method('spawn', force=True)\n"
            "from chemassay.runtime.parallel import parallel_map\n"
            "{call}\n")
    call = "print(sum(parallel_map(abs, range(-50, 50), n_jobs=2, chunk_size=10)))"
    unguarded = tmp_path / "unguarded.py"
    unguarded.write_text(body.format(call=call))
    guarded = tmp_path / "guarded.py"
    guarded.write_text(body.format(call="if __name__ == '__main__':\n    " + call))
    started = time.perf_counter()
    refused = subprocess.run([sys.executable, str(unguarded)], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and time.perf_counter() - started < 60
    assert f"{unguarded}, line 4: worker processes (n_jobs > 1) started from the top level" in refused.stderr
    assert "if __name__ == \"__main__\":" in refused.stderr and "freeze_support" not in refused.stderr
    works = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True, timeout=120)
    assert works.returncode == 0, works.stderr
    assert works.stdout.strip() == "2500"


def test_progress_in_a_log_is_a_line_every_few_seconds(caplog):
    """Without a terminal the CLI installs LineRenderer: one line per interval, with counts,
    percent and the time left, and a last line when the work took longer than one interval."""
    import logging

    from chemassay.runtime.progress import LineRenderer, progress, set_renderer

    now = [0.0]
    previous = set_renderer(LineRenderer(interval=5.0, clock=lambda: now[0]))
    try:
        with caplog.at_level(logging.INFO, logger="chemassay"):
            for _ in progress(range(10), description="cleaning reactions"):
                now[0] += 1.5
    finally:
        set_renderer(previous)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["cleaning reactions: 4/10 (40 %), 6 s, about 9 s left",
                     "cleaning reactions: 8/10 (80 %), 12 s, about 3 s left",
                     "cleaning reactions: 10/10 (100 %), 15 s (done)"]
    # the library alone (no renderer installed) is silent
    caplog.clear()
    previous = set_renderer(None)
    try:
        with caplog.at_level(logging.INFO, logger="chemassay"):
            now[0] = 0.0
            assert list(progress(range(3), description="quiet")) == [0, 1, 2]
    finally:
        set_renderer(previous)
    assert not caplog.records
