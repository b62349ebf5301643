"""The scorecard rendered in headless Chromium (Debian's ``chromium``; skipped, saying why, where
it is not installed): it loads from a file with no console error, every section is there, and
every picture loads."""

from chemassay.report.load import load_results
from chemassay.report.scorecard import build_report

from .samples import every_suite

SUITES = ("stoichiometry", "reaction-ood", "generation", "robustness", "mechanism")
PAGE_FACTS = """({
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
  images: Array.from(document.images).map(i => ({alt: i.alt, complete: i.complete, width: i.naturalWidth})),
  leaderboards: document.querySelectorAll('table.leaderboard').length,
  published: document.querySelectorAll('tr.published').length,
  best: document.querySelectorAll('td.best').length,
  title: document.title,
})"""


def test_scorecard_in_headless_chromium(tmp_path, browser, test_cards):
    html, _ = build_report(load_results(every_suite(tmp_path / "results")), tmp_path / "report", title="browser check")
    session = browser.open_page(html.resolve().as_uri())
    facts = browser.evaluate(session, PAGE_FACTS)
    assert browser.console_errors(session) == []
    assert facts["title"] == "browser check"
    expected = {"summary"} | {f"{part}-{suite}" for suite in SUITES
                              for part in ("suite", "leaderboards", "plots", "published", "details")}
    expected |= {f"gallery-{suite}" for suite in SUITES if suite != "generation"}
    assert expected <= set(facts["ids"])
    broken = [image["alt"] for image in facts["images"] if not image["complete"] or image["width"] == 0]
    assert len(facts["images"]) > 20 and broken == []
    assert facts["leaderboards"] >= 5 and facts["published"] > 0 and facts["best"] > 0


def test_the_browser_check_does_catch_errors(tmp_path, browser):
    """A negative control: a broken picture and a failing script are both detected."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><body><img alt="bad" src="data:image/png;base64,AAAA">'
                    "<script>undefinedFunction()</script></body></html>")
    session = browser.open_page(page.as_uri())
    facts = browser.evaluate(session, PAGE_FACTS)
    assert [image["width"] for image in facts["images"]] == [0]
    assert any("undefinedFunction" in error for error in browser.console_errors(session))
