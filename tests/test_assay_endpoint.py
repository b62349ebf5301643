"""``chemassay assay`` end to end with a model behind a real OpenAI-compatible server on 127.0.0.1
that answers every protocol (reactions, bags, samples, mechanisms, embeddings):

* one quick assay gives a result in every suite, each naming its dataset and setting; the
  scorecard puts the matching paper rows beside them (mechanism's one-shot rows of GPT and o3,
  stoichiometry's rows of the result's own variant and split, only the matching Table S2.2
  row beside a document-split result) and renders in headless Chromium without a console
  error or a broken picture;
* an assay killed half way resumes sending only the requests that were not answered.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support.openai_server import OpenAIServer

pytest.importorskip("httpx")
pytestmark = pytest.mark.filterwarnings("ignore:Can't compute unique@")

PAGE_FACTS = """({
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
  images: Array.from(document.images).map(i => ({alt: i.alt, complete: i.complete, width: i.naturalWidth})),
  published: document.querySelectorAll('tr.published').length,
  verdicts: document.querySelectorAll('#verdicts tbody tr').length,
  width: document.documentElement.scrollWidth,
  overflowing: Array.from(document.querySelectorAll('body *'))
    .filter(e => !e.closest('.scroll') && e.getBoundingClientRect().right > window.innerWidth + 1)
    .map(e => e.tagName + '.' + e.className).slice(0, 10),
})"""


@pytest.fixture
def moses_available(monkeypatch, tmp_path):
    """The fetched MOSES files (the generation suite scores against the real test sets) under
    an otherwise empty chemassay home."""
    from chemassay.data import locate

    found = locate("moses", "test_stats.npz")
    if found is None:
        pytest.skip("MOSES not fetched (chemassay data fetch moses; make test fetches it)")
    monkeypatch.setenv("CHEMASSAY_DATA", str(found.parent.parent))
    monkeypatch.setenv("CHEMASSAY_HOME", str(tmp_path / "home"))


def test_one_quick_assay_of_an_endpoint_model_in_every_suite(moses_available, cli, tmp_path, browser):
    from chemassay.assaying import results_under
    from chemassay.report.scorecard import build_scorecard

    server = OpenAIServer()
    try:
        spec = f"openai:chemist,base_url={server.base_url},backoff=0.01,concurrency=8"
        outcome = cli("assay", "--quick", "--model", spec, "--out", tmp_path / "assay")
    finally:
        server.close()
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    manifest = json.loads((tmp_path / "assay" / "assay.json").read_text())
    assert [s["suite"] for s in manifest["suites"]] == ["stoichiometry", "reaction-ood", "generation", "robustness",
                                                       "mechanism"]
    assert all(not s["skipped"] and s["verdict"] for s in manifest["suites"])
    results = results_under(tmp_path / "assay")
    by_suite = {suite: [r for r in results if r.suite == suite] for suite in
                ("stoichiometry", "reaction-ood", "generation", "robustness", "mechanism")}
    assert all(by_suite.values())
    expected_data = {"stoichiometry": "uspto-15k", "reaction-ood": "schneider-50k", "generation": "moses",
                     "robustness": {"amore-chebi20", "amore-isomers"}, "mechanism": "omebench"}
    for suite, members in by_suite.items():
        for result in members:
            want = expected_data[suite]
            assert result.dataset.name in (want if isinstance(want, set) else {want}), (suite, result.dataset)
            assert result.setting and result.quick and result.model.kind == "openai", (suite, result.setting)
            assert result.requests is not None and result.requests.failed == 0
    assert by_suite["mechanism"][0].setting == {"dataset": "gold", "prompt": "one-shot"}

    card = build_scorecard(results)
    sections = {section.suite: section for section in card.sections}
    # mechanism: the paper's one-shot rows (Table 3), GPT and o3 among them, on the very same data
    (mechanism,) = sections["mechanism"].leaderboards
    labels = [row.label for row in mechanism.rows if row.published]
    assert any("GPT" in label for label in labels) and any(label.startswith("o3") for label in labels)
    assert all("Table 3" in row.source for row in mechanism.rows if row.published) and not mechanism.other_data
    # stoichiometry: every board is one variant and one split, its paper rows that variant and split only
    for board in sections["stoichiometry"].leaderboards:
        assert {"variant", "split"} <= set(board.setting), board.setting
        rows = board.other_data
        assert rows and len({row.label for row in rows}) == len(rows), [row.label for row in rows]
        assert all(row.setting.get("variant") == board.setting["variant"] for row in rows)
        assert all(row.setting.get("split", board.setting["split"]) == board.setting["split"] for row in rows)
    # reaction-ood: beside the document split's new patents, only Table S2.2's "on documents" row
    document = next(b for b in sections["reaction-ood"].leaderboards
                    if b.setting.get("split") == "document" and b.setting.get("part") == "test_ood")
    s22 = [row for row in document.other_data if "S2.2" in row.source]
    assert len(s22) == 1 and s22[0].label.endswith("on documents")
    # generation and robustness: the paper's rows, measured on the same data (MOSES, ChEBI-20)
    assert any(row.published for board in sections["generation"].leaderboards for row in board.rows)
    chebi = next(b for b in sections["robustness"].leaderboards if b.setting.get("dataset") == "chebi20")
    assert any(row.published for row in chebi.rows)
    # quick results are shown, never ranked
    assert not any(cell.best for section in card.sections for board in section.leaderboards
                   for row in board.rows for cell in row.cells.values())

    html = tmp_path / "assay" / "index.html"
    session = browser.open_page(html.resolve().as_uri(), width=1400)
    facts = browser.evaluate(session, PAGE_FACTS)
    assert browser.console_errors(session) == []
    assert {f"suite-{suite}" for suite in by_suite} <= set(facts["ids"]) and facts["verdicts"] == 5
    broken = [image["alt"] for image in facts["images"] if not image["complete"] or image["width"] == 0]
    assert facts["images"] and broken == [] and facts["published"] > 0
    # nothing overflows a 1,400-pixel window: wide tables scroll inside their own box
    assert facts["width"] <= 1400 and facts["overflowing"] == []


class HoldAfter:
    """Answers the first ``count`` chat requests, then holds every later one (a hung server)
    until released, so a test can kill the client at a known point."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.seen = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> bool:
        with self.lock:
            self.seen += 1
            return self.seen > self.count


def test_a_killed_assay_resumes_sending_only_the_missing_requests(tmp_path):
    server = OpenAIServer()
    held = HoldAfter(40)
    server.fault, server.fault_filter, server.hang_seconds = "hang", held, 120
    env = {**os.environ, "CHEMASSAY_HOME": str(tmp_path / "home"), "CHEMASSAY_NO_STORE": "1"}
    spec = f"openai:chemist,base_url={server.base_url},concurrency=4,timeout=150"
    command = [sys.executable, "-m", "chemassay", "assay", "--quick", "--suites", "mechanism,stoichiometry",
               "--model", spec, "--out", str(tmp_path / "assay")]
    try:
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 start_new_session=True)
        deadline = time.monotonic() + 240
        while held.seen <= held.count + 3 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.2)
        assert held.seen > held.count, child.stderr.read().decode() if child.poll() is not None else "too slow"
        time.sleep(1.5)  # the client writes what it received within about 0.2 s
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        answered = set(server.answered_bodies)
        first_total = len(server.chat_requests())
        assert len(answered) == held.count
        server.clear_faults()
        rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        asked_again = [json.dumps(body, sort_keys=True) for body in server.chat_requests()[first_total:]]
    finally:
        server.close()
    assert asked_again, "the rerun sent nothing"
    # every request the first run had its answer for is answered from the cache (or the
    # predictions written so far); only the rest reach the server
    assert not set(asked_again) & answered
    assert len(set(asked_again)) == len(asked_again)
    manifest = json.loads((tmp_path / "assay" / "assay.json").read_text())
    statuses = {suite["suite"]: [task["status"] for task in suite["tasks"]] for suite in manifest["suites"]}
    assert set(statuses) == {"stoichiometry", "mechanism"} and "failed" not in str(statuses)
    assert Path(tmp_path / "assay" / "index.html").is_file()
