"""The report's judges (issue 49, item 3): a judges page with each judge's rates (against labels when the report
has them, else coverage, conflicts and flip rate) and its conflicts linked to the step of the run page; each run
page lists the judges' verdicts its evidence contradicts, with the step and the evidence; a judge's text is
escaped; no judges page for a ledger without judgments."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import trajcheck

from conftest import SAMPLES

pytestmark = pytest.mark.slow  # the sample runs scored with judges, and a report written

FALSE_SUCCESSES = ("consent-overlay-off", "nc-signin-gave-up", "terms-checkbox-off")
EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample runs scored with three judges: ``lenient`` (the labels, but three failed runs called successes),
    ``harsh`` (fails terms-checkbox-on, whose contract and evaluator passed) and one whose name is markup."""
    tmp = tmp_path_factory.mktemp("judged")
    labels = json.loads((SAMPLES / "labels.json").read_text())
    lenient = tmp / "lenient.csv"
    lenient.write_text("run_id,verdict,judge\n" + "".join(
        f"{rid},{'pass' if rid in FALSE_SUCCESSES else lab['outcome']},lenient\n"
        for rid, lab in sorted(labels.items())))
    others = tmp / "others.jsonl"
    others.write_text(json.dumps({"run_id": "terms-checkbox-on", "verdict": "fail", "judge": "harsh"}) + "\n"
                      + json.dumps({"run_id": "captcha-blocked", "verdict": "pass", "judge": EVIL,
                                    "reason": "<img src=x onerror=alert(2)>"}) + "\n")
    out = tmp / "ledger"
    trajcheck.score([SAMPLES], out, jobs=1, judgments=[lenient, others])
    return out


@pytest.fixture(scope="module")
def report(judged: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "rep"
    trajcheck.report(judged, out, max_runs=0, jobs=1)
    return out


def _links(html: str) -> list[str]:
    return re.findall(r'href="([^"]+)"', html)


def test_the_judges_page_lists_each_judges_rates_and_links_its_conflicts(report: Path) -> None:
    page = (report / "judges.html").read_text("utf-8")
    assert "<h1>Judges</h1>" in page and "No labels given" in page
    for name in ("lenient", "harsh", "&lt;script&gt;alert(1)&lt;/script&gt;"):
        assert f">{name}</a></td>" in page
    assert "<th>coverage</th>" in page and "<th>flip rate</th>" in page and "<th>precision</th>" not in page
    # lenient's three false successes, each linked to the step of its run page that shows it
    for rid, step in (("consent-overlay-off", 1), ("nc-signin-gave-up", 1), ("terms-checkbox-off", 1)):
        assert f"runs/{rid}.html#step-{step}" in _links(page)
    assert "runs/terms-checkbox-off.html#step-2" in _links(page)  # its failed contract check, on the last step
    # harsh's failure, contradicted by the contract and the evaluator
    assert page.count('<span title="the contract passed">contract_passed</span>') == 1
    assert "runs/terms-checkbox-on.html#step-" in page
    # every run page linked is there, with the step it names
    for href in _links(page):
        if href.startswith("runs/"):
            file, _, anchor = href.partition("#")
            assert f'id="{anchor}"' in (report / file).read_text("utf-8"), href
    index = (report / "index.html").read_text("utf-8")
    assert 'href="judges.html"' in index
    assert "<li>lenient: judged 28, passes 18, fails 10; successes the evidence contradicts 3, failures 0" in index


def test_a_run_page_lists_the_judges_its_evidence_contradicts(report: Path) -> None:
    run = (report / "runs" / "consent-overlay-off.html").read_text("utf-8")
    block = run[run.index("<div class=judge-conflicts>"):]
    block = block[:block.index("</div>")]
    kinds = re.findall(r'data-judge="lenient" data-kind="([a-z_]+)"', block)
    assert kinds == ["dead_decisive_action", "missing_text"]
    assert 'at <a href="#step-1">step 1</a> (CLICK)' in block and "changed nothing" in block
    assert 'href="../judges.html"' in block
    captcha = (report / "runs" / "captcha-blocked.html").read_text("utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; said <b>pass</b>" in captcha and EVIL not in captcha
    assert "<img src=x" not in captcha and "&lt;img src=x onerror=alert(2)&gt;" in captcha
    # a run whose evidence contradicts no judge has no such list
    assert "judge-conflicts" not in (report / "runs" / "consent-overlay-on.html").read_text("utf-8")
    assert EVIL not in (report / "judges.html").read_text("utf-8")


def test_labels_add_each_judges_rates_and_a_rerun_writes_nothing(judged: Path, report: Path, tmp_path: Path) -> None:
    again = trajcheck.report(judged, report, max_runs=0, jobs=1)
    assert again.written == 0  # byte-identical pages
    out = tmp_path / "labelled"
    trajcheck.report(judged, out, max_runs=0, jobs=1, labels=SAMPLES / "labels.json")
    page = (out / "judges.html").read_text("utf-8")
    assert "Rates against the labels of 28 runs" in page and "<th>false success</th>" in page
    assert "23.1% [8.2, 50.3] (3/13)" in page  # lenient's false successes, as `trajcheck judges` counts them
    assert "; false success 23.1% [8.2, 50.3] (3/13)</li>" in (out / "index.html").read_text("utf-8")


def test_no_judges_page_without_judgments(sample_ledger: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    trajcheck.report(sample_ledger, out, max_runs=0, jobs=1)
    assert not (out / "judges.html").exists()
    assert "judges.html" not in (out / "index.html").read_text("utf-8")
    assert "judge-conflicts" not in (out / "runs" / "consent-overlay-off.html").read_text("utf-8")


@pytest.mark.browser
def test_a_conflict_link_opens_its_step_in_chromium(report: Path) -> None:
    from test_report_export import ARGS, CHROMIUM, _browser

    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
        page.goto((report / "index.html").as_uri())
        page.click('a[href="judges.html"]')
        page.wait_for_load_state("load")
        assert page.locator("h1").text_content() == "Judges"
        page.click('table.conflicts a[href="runs/terms-checkbox-off.html#step-2"]')
        page.wait_for_load_state("load")
        assert page.url.endswith("runs/terms-checkbox-off.html#step-2")
        assert page.locator("#step-2").is_visible() and page.locator(".judge-conflicts li").count() == 2
        page.goto((report / "runs" / "captcha-blocked.html").as_uri())
        assert EVIL in page.locator(".judge-conflicts").text_content()  # shown as text, never run
        assert errors == []
        browser.close()
