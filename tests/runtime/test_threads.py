"""Kernel threads: independent blocks on threads with single-threaded kernels."""

from __future__ import annotations

import threading

import pytest

from chemassay.runtime.threads import default_threads, single_threaded_kernels, thread_map


def test_thread_map_keeps_order_and_uses_threads():
    seen = set()

    def work(x):
        seen.add(threading.get_ident())
        return x * x

    assert thread_map(work, range(50), n_threads=3) == [x * x for x in range(50)]
    assert thread_map(work, [], n_threads=3) == []
    assert thread_map(work, [4], n_threads=1) == [16]


def test_thread_map_reraises_the_first_error():
    def work(x):
        if x == 3:
            raise ValueError("bad block")
        return x

    with pytest.raises(ValueError, match="bad block"):
        thread_map(work, range(6), n_threads=2)


def test_single_threaded_kernels_is_reentrant_and_restores():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with single_threaded_kernels():
        assert torch.get_num_threads() == 1
        with single_threaded_kernels():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_default_threads_from_the_environment(monkeypatch):
    monkeypatch.setenv("CHEMASSAY_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("CHEMASSAY_THREADS", "zero")
    assert default_threads() >= 1
