"""Faults, per command family: unreadable input, unwritable output, Ctrl-C, unreachable
endpoint. Each asserts the exit code, a one-line message and that no partial output is left."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.signals import sigint_by_default

BINARY = b"CCO\n\xff\xfe\x00\x01binary\n"


def _one_line_error(outcome, *names: str) -> None:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert outcome.code == 2, outcome.stderr
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in outcome.stderr, outcome.stderr
    for name in names:
        assert name in errors[0], errors[0]


@pytest.fixture
def inputs(tmp_path):
    """Small valid inputs of every suite, and a binary and a truncated-gzip file."""
    files = {}
    files["binary"] = tmp_path / "binary.txt"
    files["binary"].write_bytes(BINARY)
    data = gzip.compress(b"CCO\n" * 5000)
    files["truncated"] = tmp_path / "cut.txt.gz"
    files["truncated"].write_bytes(data[: len(data) // 2])
    files["bags"] = tmp_path / "bags.txt"
    files["bags"].write_text("{1}CCO\n{2}O\n")
    files["smiles"] = tmp_path / "mols.txt"
    files["smiles"].write_text("CCO\nc1ccccc1\nCC(=O)O\n")
    files["truth"] = tmp_path / "truth.csv"
    files["truth"].write_text("id,reactants,products\n0,CCO.CC(=O)O,CCOC(C)=O\n")
    files["readonly"] = tmp_path / "readonly"
    files["readonly"].mkdir()
    os.chmod(files["readonly"], 0o555)
    yield files
    os.chmod(files["readonly"], 0o755)


def _commands(files: dict[str, Path], bad: Path, out: Path) -> list[tuple[str, list[str]]]:
    """One command per family with ``bad`` as its input and ``out`` as its output."""
    small_refs = ["--test", str(files["smiles"]), "--scaffold-test", "none", "--train", str(files["smiles"])]
    return [
        ("stoichiometry evaluate", ["stoichiometry", "evaluate", str(bad), str(files["bags"]), "--out", str(out)]),
        ("stoichiometry balance", ["stoichiometry", "balance", str(bad), "--out", str(out)]),
        ("reaction-ood evaluate", ["reaction-ood", "evaluate", str(bad), "--truth", str(files["truth"]), "--out", str(out)]),
        ("reaction-ood clean", ["reaction-ood", "clean", str(bad), "--out", str(out.with_suffix(".parquet"))]),
        ("generation evaluate", ["generation", "evaluate", str(bad), *small_refs, "--bootstrap", "0", "--no-plot",
                                 "--out", str(out)]),
        ("generation filter", ["generation", "filter", str(bad), "--out", str(out.with_suffix(".txt"))]),
        ("robustness augment", ["robustness", "augment", str(bad), "--kind", "kekulize", "--out", str(out.with_suffix(".csv"))]),
        ("mechanism evaluate", ["mechanism", "evaluate", str(bad), "--out", str(out)]),
        ("mechanism verify", ["mechanism", "verify", str(bad)]),
    ]


@pytest.mark.parametrize("kind", ["binary", "truncated"])
def test_unreadable_input_is_one_line_exit_2_and_no_output(cli, inputs, tmp_path, kind, isolated_home):
    bad = inputs[kind]
    for family, args in _commands(inputs, bad, tmp_path / "out.json"):
        outcome = cli(*args)
        _one_line_error(outcome, str(bad))
        assert not list(tmp_path.glob("out.*")), family


@pytest.mark.parametrize("where", ["under-a-file", "read-only-folder"])
def test_unwritable_output_fails_before_work(cli, inputs, isolated_home, where):
    if where == "read-only-folder" and os.geteuid() == 0:
        pytest.skip("running as root: permissions do not stop root from writing (the under-a-file case runs)")
    parent = inputs["bags"] if where == "under-a-file" else inputs["readonly"]
    out = parent / "sub" / "out.json"
    valid = {"stoichiometry evaluate": inputs["bags"], "generation evaluate": inputs["smiles"],
             "generation filter": inputs["smiles"], "robustness augment": inputs["smiles"]}
    for family, args in _commands(inputs, Path("unused"), out):
        if family not in valid:
            continue
        args = [str(valid[family]) if a == "unused" else a for a in args]
        started = time.perf_counter()
        outcome = cli(*args)
        _one_line_error(outcome, str(parent / "sub"))
        assert time.perf_counter() - started < 20, family


@pytest.mark.parametrize(
    ("family", "args"),
    [
        ("reaction-ood evaluate", ["reaction-ood", "evaluate", "--truth", "{truth}", "--model", "openai:m"]),
        ("stoichiometry evaluate", ["stoichiometry", "evaluate", "{bags}", "--src", "{bags}", "--model", "openai:m"]),
        ("generation evaluate", ["generation", "evaluate", "--model", "openai:m,base_url=http://127.0.0.1:9/v1", "--n", "3",
                                 "--test", "{smiles}", "--scaffold-test", "none", "--train", "{smiles}", "--no-plot"]),
        ("robustness evaluate", ["robustness", "evaluate", "--model", "openai:m", "--dataset", "isomers"]),
        ("mechanism predict", ["mechanism", "predict", "gold", "--model", "openai:m", "--limit", "3"]),
    ],
)
def test_unreachable_endpoint_fails_fast_with_the_url(cli, inputs, tmp_path, isolated_home, family, args):
    out = tmp_path / "out.json"
    args = [a.format(**{k: str(v) for k, v in inputs.items()}) for a in args]
    if not any("base_url=" in a for a in args):
        args += ["--base-url", "http://127.0.0.1:9/v1"]
    args += ["--out", str(out)]
    started = time.perf_counter()
    outcome = cli(*args)
    _one_line_error(outcome, "127.0.0.1:9")
    assert time.perf_counter() - started < 30, family
    assert not out.exists()


def _interrupt(args: list[str], tmp_path: Path, *, after: float) -> tuple[int, float, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "chemassay", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                               preexec_fn=sigint_by_default)
    # Interrupt in the middle of the parallel work: shortly after the first worker process
    # appears (a quiet machine finishes these commands in a few seconds), at most after ``after``.
    deadline = time.perf_counter() + after
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    while time.perf_counter() < deadline and process.poll() is None:
        if children.is_file() and children.read_text().split():
            time.sleep(0.5)
            break
        time.sleep(0.05)
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"{args[:2]} still running 30 s after Ctrl-C") from None
    return process.returncode, time.perf_counter() - sent, err


@pytest.mark.parametrize(
    "args",
    [
        ["reaction-ood", "clean", "schneider-50k", "-j", "2", "--out", "clean.parquet"],
        ["stoichiometry", "balance", "uspto-15k", "-j", "2", "--out", "out.json"],
    ],
    ids=["reaction-ood clean -j 2", "stoichiometry balance -j 2"],
)
def test_ctrl_c_stops_within_seconds_with_exit_130_and_no_output(tmp_path, args, isolated_home):
    code, waited, err = _interrupt(args, tmp_path, after=6.0)
    produced = [p.name for p in tmp_path.iterdir()]
    assert code == 130, err[-500:]
    assert waited < 10, f"took {waited:.1f} s to stop"
    assert "Traceback" not in err and "interrupted" in err
    assert produced == [], produced
