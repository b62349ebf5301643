"""The scorecard as a reviewer reads it, in headless Chromium at 1,400 × 900 (Debian's
``chromium``; skipped, saying why, where it is not installed): the first three screens hold
every suite's verdict and its paper's table; no table or figure is wider than the window (no
column hidden off screen); no text of any SVG picture is cut by the picture's edge.

The page is built from real runs: the quick assay of every suite's built-in baseline."""

from __future__ import annotations

import pytest

from chemassay.report.load import load_results
from chemassay.report.scorecard import build_report

from .samples import every_suite

WIDTH, HEIGHT, SCREENS = 1400, 900, 3
SUITES = ("stoichiometry", "reaction-ood", "generation", "robustness", "mechanism")

LAYOUT = """(() => {
  const y = e => e.getBoundingClientRect().bottom + window.scrollY;
  const verdicts = Array.from(document.querySelectorAll('#verdicts tbody tr')).map(
    tr => ({suite: tr.cells[0].innerText.trim(), text: tr.cells[1].innerText.trim(), bottom: y(tr)}));
  const papers = Array.from(document.querySelectorAll('section.paper')).map(section => {
    const table = section.querySelector('table.paper-table');
    return {id: section.id, bottom: y(table), rows: table.tBodies[0].rows.length,
            yours: table.querySelectorAll('tr.yours').length,
            figure: section.querySelectorAll('figure img').length};
  });
  const width = document.documentElement.clientWidth;
  const wide = [];
  for (const e of document.querySelectorAll('table, figure, img, .scroll, .tablebox')) {
    if (e.closest('details') && !e.closest('details').open) continue;
    const box = e.getBoundingClientRect();
    if (box.width === 0) continue;
    const scrolls = (e.classList.contains('scroll') || e.classList.contains('tablebox')) && e.scrollWidth > e.clientWidth + 1;
    if (box.right > width + 0.5 || box.left < -0.5 || scrolls) {
      const where = e.closest('[id]');
      wide.push(`${e.tagName.toLowerCase()}.${e.className} in #${where ? where.id : '?'}: right ${Math.round(box.right)}`
                + (scrolls ? ` scrolls ${e.scrollWidth} > ${e.clientWidth}` : ''));
    }
  }
  const clipped = [];
  let svgs = 0;
  const host = document.createElement('div');
  host.style.cssText = 'position:absolute;left:0;top:0;';
  document.body.appendChild(host);
  for (const img of Array.from(document.images)) {
    if (!img.src.startsWith('data:image/svg+xml;base64,')) continue;
    const bytes = Uint8Array.from(atob(img.src.split(',')[1]), c => c.charCodeAt(0));
    host.innerHTML = new TextDecoder().decode(bytes);
    svgs += 1;
    for (const text of host.querySelectorAll('text')) {
      const frame = text.ownerSVGElement.getBoundingClientRect();
      const box = text.getBoundingClientRect();
      if (box.width === 0) continue;
      if (box.left < frame.left - 0.5 || box.right > frame.right + 0.5 || box.top < frame.top - 0.5
          || box.bottom > frame.bottom + 0.5) {
        clipped.push(`${img.alt}: "${text.textContent}" (${Math.round(box.left - frame.left)}..${Math.round(box.right - frame.left)} of ${Math.round(frame.width)})`);
      }
    }
  }
  host.remove();
  return {verdicts, papers, wide, clipped, svgs, height: document.documentElement.scrollHeight};
})()"""


def page_facts(browser, html_path) -> dict:
    session = browser.open_page(html_path.resolve().as_uri(), width=WIDTH, height=HEIGHT)
    facts = browser.evaluate(session, LAYOUT)
    facts["errors"] = browser.console_errors(session)
    return facts


def check_reviewer_layout(facts: dict, suites=SUITES) -> None:
    fold = SCREENS * HEIGHT
    assert facts["errors"] == []
    assert [v["suite"] for v in facts["verdicts"]] == list(suites)
    assert all(v["text"] and v["bottom"] <= fold for v in facts["verdicts"]), facts["verdicts"]
    assert [p["id"] for p in facts["papers"]] == [f"paper-{s}" for s in suites]
    late = [p["id"] for p in facts["papers"] if p["bottom"] > fold]
    assert not late, f"paper tables below the first {SCREENS} screens: {late} ({facts['papers']})"
    assert all(p["yours"] >= 1 and p["figure"] == 1 for p in facts["papers"]), facts["papers"]
    assert facts["wide"] == [], facts["wide"]
    assert facts["svgs"] > 5 and facts["clipped"] == [], facts["clipped"]


@pytest.fixture(scope="module")
def quick_assay(tmp_path_factory):
    """The quick assay of every suite's built-in baseline (its scorecard is the page checked)."""
    from chemassay.assaying import assay

    out = tmp_path_factory.mktemp("quick-assay")
    report = assay(None, out=out, quick=True, n_jobs=1)
    assert not report.failed, [t.message for s in report.suites for t in s.tasks if t.status == "failed"]
    return report


def test_the_first_screens_answer_for_a_quick_assay_of_the_baselines(quick_assay, browser):
    facts = page_facts(browser, quick_assay.scorecard)
    check_reviewer_layout(facts)


def test_the_same_page_from_chemassay_report(quick_assay, browser, tmp_path):
    """``chemassay report`` of the same result files (no assay manifest): the verdicts come
    from each suite's assay, the layout holds as well."""
    from chemassay.assaying import results_under

    html, _md = build_report(results_under(quick_assay.out), tmp_path / "report", title="report of a quick assay")
    check_reviewer_layout(page_facts(browser, html))


def test_the_layout_check_catches_a_page_that_breaks_it(browser, tmp_path):
    """A negative control: a table wider than the window, a cut SVG label and a paper table
    below the fold are all reported."""
    import base64

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><text x="60" y="20" font-size="12">'
           "smiles_t2_x1 out</text></svg>")
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><body><table id="verdicts"><tbody><tr><td>stoichiometry</td><td>EM 1 %</td></tr>'
        f'</tbody></table><div style="height:3000px"></div><section class="paper" id="paper-stoichiometry">'
        '<table class="paper-table"><tbody><tr class="yours"><td>x</td></tr></tbody></table>'
        f'<figure><img alt="chart" src="{uri}"></figure></section>'
        '<div class="scroll"><table style="width:2000px"><tr><td>wide</td></tr></table></div></body></html>')
    facts = page_facts(browser, page)
    with pytest.raises(AssertionError):
        check_reviewer_layout(facts, suites=("stoichiometry",))
    assert facts["clipped"] and "smiles_t2_x1 out" in facts["clipped"][0]
    assert any("scrolls" in w for w in facts["wide"]) and facts["papers"][0]["bottom"] > SCREENS * HEIGHT


def test_sample_results_of_every_suite_keep_the_layout(browser, tmp_path, test_cards):
    """The hand-made results of every suite (galleries, per-item plots) keep it too."""
    html, _md = build_report(load_results(every_suite(tmp_path / "results")), tmp_path / "report")
    facts = page_facts(browser, html)
    assert facts["wide"] == [] and facts["clipped"] == [] and facts["errors"] == []
    assert [p["id"] for p in facts["papers"]] == [f"paper-{s}" for s in SUITES]


def test_the_chemalgebra_variant_chart_keeps_its_last_label(browser, tmp_path, test_cards):
    """EM ↑ on the ChemAlgebra variants, twelve settings: the last rotated label
    ("smiles_t2_x1 out") used to run past the picture's right edge."""
    import base64

    from chemassay.suites.stoichiometry.report import stoichiometry_charts

    from .samples import stoichiometry_result

    results = []
    for variant in ("formula_t1_x1", "formula_t2_x1", "smiles_t1_x1", "smiles_t2_x1"):
        for split in ("test_in", "test_cross", "test_out"):
            result = stoichiometry_result("copy-coefficient", 0.3)
            result.setting = {"variant": variant, "split": split}
            results.append(result)
    figures = stoichiometry_charts(results)
    assert [f.title for f in figures][:1] == ["EM ↑ on the ChemAlgebra variants"]
    images = "".join(f'<figure><img alt="{f.title}" src="data:image/svg+xml;base64,'
                     f'{base64.b64encode(f.data.encode()).decode()}"></figure>' for f in figures)
    page = tmp_path / "charts.html"
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{images}</body></html>')
    facts = page_facts(browser, page)
    assert facts["svgs"] == len(figures) and facts["clipped"] == [] and facts["wide"] == []
    assert "smiles_t2_x1 out" in figures[0].data
