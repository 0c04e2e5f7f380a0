"""The README and docs/ stay true: the first commands, the generated tables, the exit codes, the links."""

from __future__ import annotations

import pytest

import re
from pathlib import Path

from typer.testing import CliRunner

from trajcheck.cli.common import Exit

from conftest import ROOT

README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
COLUMNS = (DOCS / "columns.md").read_text()
REFEREE = (DOCS / "referee.md").read_text()

#: The docs this guide owns: each that speaks of "the seed" must point at the one place defining it.
REFERENCE_DOCS = ("perceptual.md", "reward.md", "referee.md", "columns.md", "ledger.md", "run-format.md",
                  "analysis.md", "performance.md")

#: How to rebuild docs/columns.md's generated half (its tables start at the `runs` heading).
REGENERATE_COLUMNS = "sed -i '/^### `runs`/,$d' docs/columns.md && trajcheck columns --format md >> docs/columns.md"


def test_first_lines_give_install_and_run_then_the_test_command() -> None:
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", README, re.S)
    assert "pip install" in blocks[0] and "trajcheck score sample_runs/" in blocks[0]
    assert "pytest" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert blocks[1].strip().splitlines()[-1] in ci


def test_exit_codes_are_documented_by_the_generated_table() -> None:
    from devtools.exitdoc import table

    section = README.split("## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    for code in Exit:
        assert re.search(rf"^\| {int(code)} \|", section, re.M), code
    assert table() in section, "README's exit-code table is stale: python -m devtools.exitdoc"


@pytest.mark.slow
def test_sample_run_figures_are_those_of_the_sample_ledger(sample_ledger: Path) -> None:
    """Every paragraph of the README that quotes figures about the sample runs is the one generated from a
    ledger of them: a sample run added, re-recorded or scored differently makes it stale."""
    from devtools.samplefigures import figures, paragraphs

    got = paragraphs(figures(sample_ledger))
    assert figures(sample_ledger)["runs"] == len(list((ROOT / "sample_runs").glob("*/run.json")))
    for text in got:
        assert text in README, ("README's sample-run figures are stale: python -m devtools.samplefigures, "
                                f"then paste the paragraph starting {text[:60]!r}")


def test_every_command_is_documented() -> None:
    from trajcheck.cli.main import COMMANDS

    for n in COMMANDS:
        assert f"| `trajcheck {n}" in README, f"README's command table has no row for `trajcheck {n}`"


def test_column_reference_is_the_generated_text() -> None:
    from trajcheck.cli.main import app

    result = CliRunner().invoke(app, ["columns", "--format", "md"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("### `runs`\n\n| column | type | description |\n")
    generated = COLUMNS[COLUMNS.index("### `runs`\n"):]
    assert generated == result.output, f"docs/columns.md is stale: {REGENERATE_COLUMNS}"


def test_evidence_referee_table_matches_its_rules() -> None:
    from trajcheck.analyzers import evidence

    rows = "".join(f"| `{c}` | {evidence.WEIGHTS[c]:+.1f} | {evidence.MEANINGS[c]} |\n" for c in evidence.WEIGHTS)
    assert "| code | weight | holds when |\n|---|---|---|\n" + rows in REFEREE, \
        "docs/referee.md's evidence referee table is stale: regenerate it from analyzers/evidence.py"


def test_claim_table_matches_its_rules() -> None:
    from trajcheck.analyzers.claims import CLAIM_RULES

    rows = "".join(f"| `{c}` | {'yes' if claimed else 'no'} | {m} |\n" for c, claimed, m in CLAIM_RULES)
    assert "| claim_reason | claimed | when |\n|---|---|---|\n" + rows in REFEREE, \
        "docs/referee.md's claim table is stale: regenerate it from analyzers/claims.py"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # a '#' comment in a code block is no heading
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_slug_follows_github() -> None:
    assert _slug("Beyond one machine: Dask and object storage") == "beyond-one-machine-dask-and-object-storage"
    assert _slug("The run directory, format `trajcheck.run/1`") == "the-run-directory-format-trajcheckrun1"
    assert _slug("Live, in a runner's loop") == "live-in-a-runners-loop"


def test_every_relative_link_resolves() -> None:
    sources = [ROOT / "README.md"] + [DOCS / n for n in REFERENCE_DOCS]
    broken = []
    for src in sources:
        for target in re.findall(r"\]\(([^)\s]+)\)", src.read_text()):
            if re.match(r"[a-z]+://", target):
                continue
            file, _, anchor = target.partition("#")
            path = (src.parent / file).resolve() if file else src
            if not path.exists():
                broken.append(f"{src.name}: {target} (no such file)")
            elif anchor and path.is_file() and anchor not in _anchors(path):
                broken.append(f"{src.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_readme_links_every_reference_doc() -> None:
    reference = README.split("## Reference\n", 1)[1]
    for name in REFERENCE_DOCS + ("formats.md", "problems.md", "architecture.md"):
        assert f"](docs/{name})" in reference, name


def test_the_seed_is_defined_once_and_pointed_at() -> None:
    assert README.count("## Where the rules come from\n") == 1
    for name in REFERENCE_DOCS:
        text = (DOCS / name).read_text()
        if re.search(r"\bseed\b", text, re.I):
            assert "README.md#where-the-rules-come-from" in text, f"docs/{name} says 'seed' without the definition"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_closing_lines_quoted_are_those_of_the_sample_runs(sample_ledger: Path) -> None:
    """The README quotes `score`'s closing lines for the sample runs: they are the lines the command prints
    for a scoring of sample_runs/ (issue 46: it said 13 pass, 11 fail, 9 false claims for 14, 12 and 10)."""
    from devtools.samplefigures import closing

    verdicts, sources = closing(sample_ledger)
    assert verdicts.startswith("verdicts: ") and sources.startswith("verdict for ")
    for line in (verdicts, sources):
        assert f"`{line}`" in _flat(README), f"README's quoted closing line is stale: {line}"


def test_the_timings_are_those_last_measured_and_say_how() -> None:
    """Timings cannot be checked by a test: the README's are the ones `python -m devtools.samplefigures --time`
    last measured with `trajcheck score` on this project's machine (benchmarks/readme_timings.json), for the
    sample runs as they are, and the paragraph says how they were measured."""
    import json

    from devtools.samplefigures import TIMINGS, timing_paragraph

    t = json.loads(TIMINGS.read_text())
    assert t["runs"] == len(list((ROOT / "sample_runs").glob("*/run.json"))), \
        "sample runs were added or removed since the timings: python -m devtools.samplefigures --time"
    text = timing_paragraph(t)
    assert text in README, "README's timings are not the last measured: python -m devtools.samplefigures --time"
    assert f"Measured on a {t['cpus']}-core machine" in text and "start-up included" in text
    assert t["cpus"] == 2  # the project's machine, as docs/performance.md measures on


#: Each cause a test may skip for: words in the skip's reason (or the names it uses) that say which cause, and
#: what the README's list names it by.
SKIP_CAUSES = {
    "chromium": ("Chromium",), "pdflatex": ("pdflatex",), "realruns": ("../shared/realruns",),
    "junit": ("JUnit schema", "junit-10.xsd"), "ocr": ("OCR",), "lxml": ("lxml",), "pywuffs": ("pywuffs",),
    "mkfifo": ("named pipes",),
}
#: The words of a skip's source that name its cause (a reason built from a path names the path's variable).
_CAUSE_WORDS = {"chromium": "chromium", "pdflatex": "pdflatex", "realruns": "realruns", "REALRUNS": "realruns",
                "frame does not decode": "realruns",  # inside the real runs' test: only those runs are skipped
                "JUNIT_XSD": "junit", "OCR": "ocr", "lxml": "lxml", "pywuffs": "pywuffs", "mkfifo": "mkfifo"}


def _skip_sources() -> list[tuple[str, str]]:
    """Every skip in the tests (pytest.skip, pytest.mark.skip/skipif, pytest.importorskip): its file and its
    source, with the module-level assignments of the names it uses (``f"{BU} is not present"`` names BU)."""
    import ast

    found = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        src = path.read_text()
        tree = ast.parse(src)
        assigned = {t.id: ast.get_source_segment(src, node) or "" for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            if name not in ("pytest.skip", "pytest.mark.skip", "pytest.mark.skipif", "pytest.importorskip"):
                continue
            text = ast.get_source_segment(src, node) or ""
            names = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)})
            text += " " + " ".join(assigned.get(n, "") for n in names)
            found.append((path.name, text))
    return found


@pytest.mark.slow
def test_the_skip_causes_listed_cover_every_skip_in_the_tests() -> None:
    section = README.split("<!-- skip-causes:", 1)[1].split("<!-- skip-causes: end -->", 1)[0]
    skips = _skip_sources()
    assert len(skips) > 10
    unknown = [(f, s[:120]) for f, s in skips if not any(w in s for w in _CAUSE_WORDS)]
    assert not unknown, f"a test skips for a cause README's list does not name (add it, and here): {unknown}"
    causes = {_CAUSE_WORDS[w] for _, s in skips for w in _CAUSE_WORDS if w in s}
    assert causes == set(SKIP_CAUSES), causes ^ set(SKIP_CAUSES)
    for cause in causes:
        assert all(words in section for words in SKIP_CAUSES[cause]), f"README's skip causes do not name {cause}"
