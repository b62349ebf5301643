"""Issue-18 cases of the generation suite, each failing before its fix: pathological molecules,
damaged or swapped cache entries, the unique@k warning, the clipped weight panel, and an
unwritable --out that used to fail only after the whole computation."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from chemassay.suites.generation.reference import load_stats
from support.logs import expect_message

pytest.importorskip("fcd_torch", reason="FCD needs the torch extra")

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"
TEST_STATS = DATA / "moses_test_300.stats.npz"
CHAIN_30000 = "C" * 30_000
LINE_1MB = "C" * 1_000_000


def cache_entries(home: Path, namespace: str, suffix: str) -> list[Path]:
    return sorted((home / "cache" / namespace).glob(f"*{suffix}"))


# ---------------------------------------------------------------- huge molecules


def test_huge_molecules_are_invalid_with_a_reason_not_a_crash(tmp_path):
    """A 30,000-atom chain killed `generation metrics` inside RDKit (exit 139) and a 1 MB line
    hung it: both are now invalid items with the core's size-limit reason."""
    gen = tmp_path / "gen.txt"
    gen.write_text(f"CCO\n{CHAIN_30000}\nc1ccccc1O\n{LINE_1MB}\nCC(=O)Nc1ccc(O)cc1\n")
    out = tmp_path / "r.json"
    command = [sys.executable, "-m", "chemassay", "generation", "evaluate", str(gen), "--out", str(out),
               "--test", str(TEST_STATS), "--scaffold-test", "none", "--train", "none", "--no-plot"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=180,
                          env={**__import__("os").environ, "CHEMASSAY_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert time.perf_counter() - started < 120
    result = json.loads(out.read_text())
    assert result["metrics"]["valid"] == pytest.approx(3 / 5)
    skipped = {item["line"]: item["reason"] for item in result["skipped"]}
    assert set(skipped) == {2, 4}
    assert all("too long" in reason and "CHEMASSAY_MAX_SMILES_LENGTH" in reason for reason in skipped.values())


def test_moses_parity_parsing_refuses_oversized_input_at_once():
    from chemassay.suites.generation.descriptors import canonicalize, invalid_reason, moses_mol
    from chemassay.suites.generation.filters import filter_verdict, passes_filters

    started = time.perf_counter()
    for text in (CHAIN_30000, LINE_1MB, "C" * 2_500):  # 2,500 heavy atoms: over the atom limit
        assert moses_mol(text) is None and canonicalize(text) is None
        assert not passes_filters(text)
        verdict = filter_verdict(text)
        assert verdict.first_failure == "parse" and ("too long" in verdict.reason or "too many atoms" in verdict.reason)
    assert "too many atoms" in invalid_reason("C" * 2_500)
    assert time.perf_counter() - started < 10


def test_filter_and_split_count_huge_molecules_as_unparseable(tmp_path):
    import chemassay.generation as generation

    molecules = ["CCO", CHAIN_30000, "c1ccccc1O", LINE_1MB]
    filtered = generation.filter(molecules)
    assert filtered.metrics["removed/parse"] == 2 and filtered.metrics["n_kept"] == 2
    parts = generation.split(molecules, tmp_path / "split", test_fraction=0.0, scaffold_test_fraction=0.0)
    assert parts.metrics["n_train"] == 2 and parts.metrics["n_skipped"] == 2
    assert all("too long" in item.reason for item in parts.skipped)


# ---------------------------------------------------------------- damaged and swapped cache entries


def test_reference_statistics_cache_damaged_or_swapped_is_rebuilt(isolated_home, small_reference, tmp_path, logged):
    """A truncated statistics cache gave BadZipFile on every later run; a valid but wrong one
    was silently used (FCD/Test 1056 instead of 8.6)."""
    from chemassay.suites.generation.metrics import evaluate_samples

    reference = tmp_path / "ref.txt"
    reference.write_text("\n".join(small_reference) + "\n")
    gen = (DATA / "moses_gen_310.txt").read_text().split()[1:41]

    def run() -> dict:
        with expect_message("Can't compute unique@"):
            return evaluate_samples(gen, test=reference, scaffold_test=None, train=None).metrics

    right = run()
    entries = cache_entries(isolated_home, "generation/reference-stats", ".npz")
    assert len(entries) == 1
    entry = entries[0]
    entry.write_bytes(entry.read_bytes()[:1000])
    assert run() == right
    assert "not usable" in logged.read()
    entry.write_bytes(TEST_STATS.read_bytes())  # statistics of another set, a perfectly valid file
    assert run() == right
    assert "not usable" in logged.read()
    assert load_stats(entry).n_molecules == 40


@pytest.mark.slow  # three conversions of the published 16 MB file; the same cache path is tested above, fast
def test_published_moses_statistics_cache_damaged_or_swapped_is_rebuilt(moses_home, logged):
    from chemassay.suites.generation.reference import published_moses_stats

    right = published_moses_stats("test")
    entries = cache_entries(moses_home, "generation/reference-stats", ".npz")
    assert len(entries) == 1 and right.source == "published" and right.n_molecules > 100_000
    entry = entries[0]
    entry.write_bytes(entry.read_bytes()[:4096])
    rebuilt = published_moses_stats("test")
    assert "not usable" in logged.read()
    assert np.array_equal(rebuilt.fcd_mu, right.fcd_mu) and np.array_equal(rebuilt.fcd_sigma, right.fcd_sigma)
    entry.write_bytes(TEST_STATS.read_bytes())  # valid statistics of 300 molecules in its place
    swapped = published_moses_stats("test")
    assert "not usable" in logged.read()
    assert swapped.n_molecules == right.n_molecules and np.array_equal(swapped.fcd_mu, right.fcd_mu)


def test_training_set_cache_damaged_or_swapped_is_rebuilt(isolated_home, tmp_path, logged):
    """A valid but wrong training-set cache gave Novelty 1.0 instead of 0.987."""
    from chemassay.suites.generation.metrics import SortedStrings, novelty, training_set

    train = DATA / "moses_train_2000.txt"
    gen = (DATA / "moses_gen_310.txt").read_text().split()[1:]
    right = novelty(gen, training_set(train))
    assert 0.0 < right < 1.0
    entries = cache_entries(isolated_home, "generation/train-sets", ".npy")
    assert len(entries) == 1
    entry = entries[0]
    entry.write_bytes(entry.read_bytes()[:200])
    assert novelty(gen, training_set(train)) == right
    assert "not usable" in logged.read()
    with open(entry, "wb") as handle:  # a valid table of other molecules: every sample would look novel
        np.save(handle, SortedStrings.from_strings(["CCO", "CCN"]).values, allow_pickle=False)
    assert novelty(gen, training_set(train)) == right
    assert "not usable" in logged.read()


# ---------------------------------------------------------------- rough edges


def test_unique_warning_says_what_the_value_is():
    from chemassay.suites.generation.metrics import fraction_unique

    value, warning = fraction_unique(["CCO", "CCO", "CCN"], 10000)
    assert value == pytest.approx(2 / 3)
    assert warning.startswith("Can't compute unique@10000: only 3 valid molecules")
    assert "unique@3" in warning and "divided by 3" in warning


def test_weight_panel_covers_the_generated_tail():
    """The panel's range came from percentiles of the pooled values, so against a large test
    set the tail of a small generated sample was cut off."""
    from chemassay.suites.generation.plots import axis_range

    rng = np.random.default_rng(0)
    reference = rng.normal(320.0, 30.0, 176_074)
    generated = rng.normal(430.0, 70.0, 7_000)
    pooled_high = np.percentile(np.concatenate([reference, generated]), 99.5)
    assert pooled_high < np.percentile(generated, 99)  # what the old range clipped
    low, high = axis_range(reference, generated)
    assert high >= np.percentile(generated, 99.5) and low <= np.percentile(reference, 0.5)
    assert axis_range(np.array([np.nan]), np.array([])) is None


def test_property_plot_is_written(tmp_path):
    from chemassay.suites.generation.plots import plot_property_distributions

    rng = np.random.default_rng(1)
    reference = {name: rng.normal(3, 1, 500) for name in ("logP", "SA", "QED", "weight")}
    generated = {name: rng.normal(5, 2, 80) for name in ("logP", "SA", "QED", "weight")}
    png = plot_property_distributions(generated, reference, tmp_path / "p.png", distances={"weight": 2.5})
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("verb", ["evaluate", "predict", "train", "filter", "split"])
def test_unwritable_out_fails_before_any_work(cli, tmp_path, isolated_home, small_reference, verb):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    bad = blocker / "out.json"
    reference = tmp_path / "ref.txt"
    reference.write_text("\n".join(small_reference) + "\n")
    model = tmp_path / "never.npz"
    gen = DATA / "moses_gen_310.txt"
    args = {
        "evaluate": ("evaluate", gen, "--test", reference, "--scaffold-test", "none", "--train", "none",
                     "--out", bad),
        "predict": ("predict", "--model", f"ngram:{model},train={DATA / 'moses_train_2000.txt'}", "--out", bad),
        "train": ("train", "--model", f"ngram:{bad}", "--train", DATA / "moses_train_2000.txt"),
        "filter": ("filter", gen, "--out", bad),
        "split": ("split", gen, "--out-dir", blocker / "split"),
    }[verb]
    started = time.perf_counter()
    outcome = cli("generation", *args)
    assert outcome.code == 2 and str(blocker) in outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1 and "Traceback" not in outcome.stderr
    assert time.perf_counter() - started < 5
    assert not model.exists()  # predict trained nothing
    assert not (isolated_home / "cache" / "generation").exists()  # no statistics were computed
