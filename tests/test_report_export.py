"""Export tables (byte-identical, LaTeX body, escaping) and the HTML report in real Chromium."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajcheck.store import ledger
from trajcheck.cli.main import app
from trajcheck.scoring.pipeline import score_paths
from trajcheck.queries.tables import RENDERERS, build, latex_escape

from conftest import SAMPLES, copy_run, read_steps, sample_run_dirs, write_steps

runner = CliRunner()
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]




@pytest.mark.slow
@pytest.mark.parametrize("table", ["summary", "per-task", "per-action-type", "compare"])
@pytest.mark.parametrize("fmt", ["md", "csv", "latex", "html", "json"])
def test_export_is_byte_identical(sample_ledger, tmp_path, table, fmt):
    args = ["export", str(sample_ledger), "--table", table, "--format", fmt, "--by", "config.perceptual_verifier"]
    a = runner.invoke(app, args + ["--out", str(tmp_path / "a")])
    b = runner.invoke(app, args + ["--out", str(tmp_path / "b")])
    assert a.exit_code == 0 and b.exit_code == 0, a.output
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    if fmt != "csv":  # CSV carries no comment line; the other formats name the trajcheck version
        assert "trajcheck 0." in (tmp_path / "a").read_text()


def test_latex_is_a_booktabs_table_body(sample_ledger):
    text = RENDERERS["latex"](build(sample_ledger, "compare", "config.perceptual_verifier"))
    lines = text.splitlines()
    assert lines[1].startswith(r"\begin{tabular}{l") and lines[-1] == r"\end{tabular}"
    assert r"\toprule" in lines and r"\midrule" in lines and r"\bottomrule" in lines
    spec = lines[1][len(r"\begin{tabular}{"):-1]
    assert set(spec) == {"l", "r"}
    ncols = len(spec)
    for row in lines[3:-2]:
        if row != r"\midrule":
            assert row.endswith(r"\\") and row.count(" & ") == ncols - 1
    assert "%" not in "".join(lines[1:]).replace(r"\%", "")  # every percent sign escaped
    assert latex_escape("a_b & 50% #1") == r"a\_b \& 50\% \#1"


def test_markdown_has_a_caption_and_a_rate_with_interval(sample_ledger):
    text = RENDERERS["md"](build(sample_ledger, "summary", "config.perceptual_verifier"))
    assert text.startswith("Table: ") and "95% Wilson" in text
    assert "% [" in text


def _hostile_ledger(tmp_path: Path) -> Path:
    src = sample_run_dirs()[0]
    d = copy_run(src, tmp_path / "runs" / "xss")
    meta = json.loads((d / "run.json").read_text())
    meta["run_id"] = "<img src=x onerror=alert(1)>"
    meta["goal"] = "</p><script>window.__pwned = 1</script>"
    (d / "run.json").write_text(json.dumps(meta))
    steps = read_steps(d)
    steps[0]["reasoning"] = "<script>window.__pwned = 2</script> click Submit"
    write_steps(d, steps)
    rep = score_paths([tmp_path / "runs"], jobs=1)
    out = tmp_path / "L"
    ledger.write(out, [r.run for r in rep.results], [s for r in rep.results for s in r.steps])
    return out


@pytest.mark.slow
def test_report_escapes_everything_from_the_run(tmp_path):
    out = _hostile_ledger(tmp_path)
    res = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    page = "".join(p.read_text() for p in [tmp_path / "rep" / "index.html", *(tmp_path / "rep" / "runs").glob("*.html")])
    assert "<script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned = 2&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def _browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium (see .ci/run)")
        pytest.skip("no /usr/bin/chromium on this machine: apt-get install chromium (Debian) to run the report test")
    from playwright.sync_api import sync_playwright
    return sync_playwright()


@pytest.mark.browser
def test_report_renders_in_chromium_with_thumbnails(sample_ledger, tmp_path):
    """Issue 15: the index lists every run, filters by verdict and false claim, searches and sorts; a run page
    shows its thumbnails."""
    res = runner.invoke(app, ["report", str(sample_ledger), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    index = tmp_path / "rep" / "index.html"
    n_runs = len(ledger.query(sample_ledger, "select run_id from runs").rows)
    n_pass = len(ledger.query(sample_ledger, "select run_id from runs where eval_final_verdict = 'pass'").rows)
    n_claim = len(ledger.query(sample_ledger, "select run_id from runs where false_claim").rows)
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(index.as_uri())
        page.wait_for_load_state("load")
        visible = "#runs tbody tr:not([hidden])"
        assert page.locator(visible).count() == n_runs and page.locator("#shown").text_content() == f"{n_runs} of {n_runs} runs"
        first = page.locator(f"{visible} td:first-child").first.text_content()
        assert first in [r[0] for r in ledger.query(sample_ledger, "select run_id from runs where false_claim").rows]
        page.select_option("#verdict", "pass")
        assert page.locator(visible).count() == n_pass
        page.select_option("#verdict", "")
        page.check("#claims")
        assert page.locator(visible).count() == n_claim
        page.uncheck("#claims")
        page.fill("#q", "sequencer")
        assert sorted(page.locator(f"{visible} td:first-child").all_text_contents()) == [
            "sequencer-correct", "sequencer-near-miss"]
        page.fill("#q", "")
        page.click("#runs thead th:nth-child(8)")  # steps, ascending (after the damage column)
        steps = [int(t) for t in page.locator(f"{visible} td:nth-child(8)").all_text_contents()]
        assert steps == sorted(steps)
        assert page.locator("svg[aria-label='success rate per arm']").count() == 1
        page.locator(f"{visible} td:first-child a").first.click()
        page.wait_for_load_state("load")
        sizes = page.evaluate("[...document.images].slice(0, 6).map(i => (i.scrollIntoView(), i.complete && i.naturalWidth))")
        page.wait_for_timeout(300)
        sizes = page.evaluate("[...document.images].slice(0, 6).map(i => i.complete ? i.naturalWidth : -1)")
        assert sizes and all(w > 0 for w in sizes), sizes
        assert "claimed success" in page.locator("div.run p").first.text_content()
        page.screenshot(path=str(tmp_path / "report.png"))
        assert errors == []
        browser.close()
    assert (tmp_path / "report.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def paired_ledger(tmp_path_factory) -> Path:
    """The sample runs recorded in both arms (<name>-off and <name>-on), scored: a report of them is a third
    of the whole sample's."""
    out = tmp_path_factory.mktemp("paired")
    rep = score_paths([d for d in sample_run_dirs() if d.name.endswith(("-on", "-off"))], jobs=1)
    ledger.write(out, [r.run for r in rep.results], [s for r in rep.results for s in r.steps])
    return out


@pytest.mark.browser
def test_pair_pages_show_both_runs_and_mark_the_divergence_in_chromium(paired_ledger, tmp_path):
    """Issue 30: the comparison links a pair page for each task recorded in both arms (the five sample pairs);
    the newsletter-subscribe page shows the two runs side by side with their thumbnails, and marks pair 2, where
    the verifier-off run declared DONE and the verifier-on run accepted the cookie banner."""
    assert len(ledger.query(paired_ledger, "select run_id from runs").rows) == 10
    res = runner.invoke(app, ["report", str(paired_ledger), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((tmp_path / "rep" / "index.html").as_uri())
        tasks = page.locator("#pairs tbody td:first-child").all_text_contents()
        assert tasks == ["create-workspace", "delete-account", "newsletter-subscribe", "signup", "support-message"]
        row = page.locator("#pairs tbody tr", has_text="newsletter-subscribe")
        assert row.locator("td").nth(3).text_content() == "pair 2: different_action"
        row.locator("td:first-child a").click()
        page.wait_for_load_state("load")
        assert page.locator("table.pairs tbody tr").count() == 4
        marked = page.locator("table.pairs tr.diverge")
        assert marked.count() == 1 and marked.get_attribute("id") == "pair-2"
        a, b = marked.locator("td.side").all()
        assert "DONE" in a.text_content() and "CLICK (1072, 699)" in b.text_content()
        assert "different_action" in page.locator("#divergence").text_content()
        # the verifier-off run had ended: its side of pairs 3 and 4 says so
        assert page.locator("table.pairs tbody tr td.side.muted").all_text_contents() == ["(ended)", "(ended)"]
        page.evaluate("[...document.images].forEach(i => i.scrollIntoView())")
        page.wait_for_timeout(300)
        sizes = page.evaluate("[...document.images].map(i => i.complete ? i.naturalWidth : -1)")
        assert len(sizes) >= 12 and all(w > 0 for w in sizes), sizes  # pre and post of each of the 6 steps
        # the two columns sit side by side: B's step 1 starts level with A's, to its right
        left, right = (page.locator("#pair-1 td.side").nth(k).bounding_box() for k in (0, 1))
        assert left and right and right["x"] > left["x"] + left["width"] - 1 and abs(right["y"] - left["y"]) < 1
        page.screenshot(path=str(tmp_path / "pair.png"), full_page=True)
        page.click("text=consent-overlay-on")
        page.wait_for_load_state("load")
        assert page.locator("div.run h3").first.text_content().startswith("consent-overlay-on")
        assert errors == []
        browser.close()
    assert (tmp_path / "pair.png").stat().st_size > 10_000


@pytest.mark.browser
def test_hostile_report_runs_no_script_in_chromium(tmp_path):
    out = _hostile_ledger(tmp_path)
    runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "rep")])
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page()
        for f in [tmp_path / "rep" / "index.html", *(tmp_path / "rep" / "runs").glob("*.html")]:
            page.goto(f.as_uri())
            assert page.evaluate("window.__pwned === undefined")
        page.goto((tmp_path / "rep" / "index.html").as_uri())
        # the run id is shown as text, not parsed as markup
        assert page.locator("#runs tbody td:first-child").first.text_content() == "<img src=x onerror=alert(1)>"
        browser.close()


@pytest.mark.latex
@pytest.mark.parametrize("table", ["summary", "per-task", "compare"])
def test_latex_export_compiles_in_a_document(sample_ledger, tmp_path, table):
    """The exported body is pasted into a real document and compiled by pdflatex."""
    import shutil
    import subprocess

    if shutil.which("pdflatex") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install pdflatex and booktabs (see .ci/run)")
        pytest.skip("no pdflatex on this machine: apt-get install texlive-latex-base texlive-latex-recommended to run it")
    body = tmp_path / "table.tex"
    res = runner.invoke(app, ["export", str(sample_ledger), "--table", table, "--format", "latex",
                              "--by", "config.perceptual_verifier", "--out", str(body)])
    assert res.exit_code == 0, res.output
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                      "\\begin{table}\\centering\\small\n\\input{table.tex}\n"
                                      "\\end{table}\n\\end{document}\n")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 1000


@pytest.mark.browser
def test_thumbnails_mark_the_click_and_long_texts_are_cut(sample_ledger, tmp_path):
    """Issue 15: the pre thumbnail of a click marks where it aimed (checked on the pixels Chromium draws of the
    thumbnail and the SVG over it, at the point scaled as the verifier scales it), and nowhere else."""
    import io

    import numpy as np
    from PIL import Image

    from trajcheck.render.marks import MARK
    from trajcheck.render.reportfiles import page_name

    res = runner.invoke(app, ["report", str(sample_ledger), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    page = tmp_path / "rep" / "runs" / f"{page_name('consent-overlay-off')}.html"
    [step] = ledger.query(sample_ledger, "select * from steps where run_id = 'consent-overlay-off' "
                                         "and step_index = 1").records()
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        view = browser.new_page(viewport={"width": 1400, "height": 900})
        view.goto(page.as_uri())
        shot = view.locator(".step").first.locator(".shot").first  # step 1's pre frame
        shot.scroll_into_view_if_needed()
        view.wait_for_function("[...document.images].slice(0, 1).every(i => i.complete && i.naturalWidth > 0)")
        img = shot.locator("img")
        w, h = int(img.get_attribute("width")), int(img.get_attribute("height"))
        box = img.bounding_box()
        pixels = np.asarray(Image.open(io.BytesIO(view.screenshot(clip=box))).convert("RGB")).astype(int)
        browser.close()
    assert pixels.shape[:2] == (h, w)
    k = w / step["frame_width"]
    x, y = round(step["action_x"] * k), round(step["action_y"] * k)  # a 1280x800 run: screen = frame
    near = pixels[y - 4:y + 5, x - 4:x + 5]
    assert (np.abs(near - np.array(MARK)).sum(axis=2) < 120).any(), "no mark at the click point"
    elsewhere = pixels[5:15, 5:15]
    assert not (np.abs(elsewhere - np.array(MARK)).sum(axis=2) < 120).any()


def test_a_long_reasoning_is_cut_with_the_whole_text_in_a_file(tmp_path):
    from trajcheck.render.htmlreport import _cut
    from trajcheck.render.reportfiles import Output

    out = Output(tmp_path, {})
    html = _cut(out, "assets/text/r-s1-reasoning.txt", "<b>" + "x" * 10_000, limit=600)
    assert html.startswith("&lt;b&gt;") and "…(9,403 more characters)" in html
    assert 'href="../assets/text/r-s1-reasoning.txt"' in html
    assert (tmp_path / "assets" / "text" / "r-s1-reasoning.txt").read_text() == "<b>" + "x" * 10_000
    assert _cut(out, "assets/text/short.txt", "short") == "short"
    assert not (tmp_path / "assets" / "text" / "short.txt").exists()


def test_a_zero_rate_label_is_not_drawn_under_its_interval_line():
    import re

    from trajcheck.render.htmlreport import _chart

    arms = [{"arm": "false", "success": {"k": 0, "n": 5, "rate": 0.0, "low": 0.0, "high": 0.434}},
            {"arm": "true", "success": {"k": 5, "n": 5, "rate": 1.0, "low": 0.566, "high": 1.0}}]
    svg = _chart(arms, "config.perceptual_verifier")
    ends = [float(x) for x in re.findall(r'<line x1="[\d.]+" x2="([\d.]+)"', svg)]
    labels = [float(x) for x in re.findall(r'<text x="([\d.]+)"[^>]*>\d+% \(', svg)]
    assert len(ends) == len(labels) == 2 and all(lx > max(ends) for lx in labels)


def test_drag_paths_and_scroll_directions_are_drawn(tmp_path):
    import xml.etree.ElementTree as ET

    from trajcheck.render.marks import MARK, Marks, svg
    from trajcheck.render.reportgeometry import motion as _motion

    step = {"action_type": "DRAG", "action_x": 300, "action_y": 200, "frame_width": 1280, "frame_height": 800,
            "action_extra": '{"start": [100, 200]}'}
    start, arrow = _motion(step, (1280, 800))
    assert start == (100.0, 200.0) and arrow is None
    scroll = {**step, "action_type": "SCROLL", "action_extra": '{"dy": 2030}'}
    assert _motion(scroll, (1280, 800)) == (None, (0, 1))
    assert _motion({**scroll, "action_extra": '{"direction": "left"}'}, (1280, 800)) == (None, (-1, 0))
    colour = f"rgb({MARK[0]},{MARK[1]},{MARK[2]})"

    def lines(m: Marks) -> list[tuple[float, ...]]:
        root = ET.fromstring(svg(m, (0, 100, 400, 300), 1.0))
        assert root.get("viewBox") == "0 100 400 200"  # the crop's box, in frame pixels
        return [tuple(float(e.get(a)) for a in ("x1", "y1", "x2", "y2")) for e in root.iter("line")
                if e.get("stroke") == colour]

    assert (100.0, 200.0, 300.0, 200.0) in lines(Marks(point=(300, 200), path=start))  # the drag, start to end
    down = lines(Marks(point=(300, 200), arrow=(0, 1)))
    assert (300.0, 200.0, 300.0, 240.0) in down  # the scroll's arrow points down from the point
    assert (300.0, 200.0, 300.0, 240.0) not in lines(Marks(point=(300, 200)))  # a click: no arrow


@pytest.mark.slow
def test_the_report_counts_only_the_thumbnails_it_drew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a ledger scored from a relative path keeps run_path relative: from another folder its frames are not found
    import shutil

    import trajcheck

    shutil.copytree(SAMPLES / "consent-overlay-on", tmp_path / "rp" / "runs" / "consent-overlay-on")
    monkeypatch.chdir(tmp_path / "rp")
    trajcheck.score(["runs"], tmp_path / "rp" / "ledger", jobs=1)
    assert trajcheck.report(tmp_path / "rp" / "ledger", tmp_path / "here").with_thumbnails == 1
    # a new process in another folder, as a user would run it
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", "from trajcheck.cli.main import main; main()", "report",
                          str(tmp_path / "rp" / "ledger"), "--out", str(tmp_path / "there"), "--format", "json"],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    assert json.loads(res.stdout)["with_thumbnails"] == 0


@pytest.mark.slow
def test_run_pages_say_the_verifier_setting_and_count_screens_in_words(sample_ledger, tmp_path):
    res = CliRunner().invoke(app, ["report", str(sample_ledger), "--out", str(tmp_path / "r"), "--max-runs", "0"])
    assert res.exit_code == 0, res.output
    pages = [p.read_text("utf-8") for p in (tmp_path / "r" / "runs").glob("*.html")]
    settings = [p.split("<b>perceptual verifier</b> ", 1)[1].split("<", 1)[0] for p in pages]
    # 14 runs recorded with it on, 5 off, 9 with no such key in their config (the nc-* runs and others)
    assert sorted(set(settings)) == ["not recorded", "off", "on"] and settings.count("off") == 5
    text = "".join(pages)
    assert "verifier recorded" not in text and "True" not in text and "False" not in text
    assert "<b>states</b> 1 screen," in text and " 1 screens" not in text
