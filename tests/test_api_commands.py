"""Issue 28: every command is one public library call, and its ``--format json`` prints exactly that call's
result (``trajcheck.commands.plain``); docs/api.md names every public function, and each name imports."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.cli.main import COMMANDS, app
from trajcheck.commands import plain

from conftest import ROOT, SAMPLES

runner = CliRunner()

RUN = "consent-overlay-off"
SQL = "select run_id, n_steps, eval_final_verdict, warnings from runs order by run_id"


def _cases(ledger: Path, tmp: Path) -> dict[str, tuple[list[str], Callable[[], Any]]]:
    """Per command: its arguments (before --format json) and the library call that must give the same data."""
    labels = SAMPLES / "labels.json"
    copy = tmp / "compact-copy"
    judged = tmp / "lenient.csv"  # a judge that calls every sample run a success
    judged.write_text("run_id,verdict\n" + "".join(f"{p.name},pass\n" for p in sorted(SAMPLES.iterdir())
                                                     if (p / "run.json").is_file()))
    return {
        "validate": ([str(SAMPLES)], lambda: trajcheck.validate([SAMPLES])),
        "query": ([str(ledger), SQL], lambda: trajcheck.query(ledger, SQL)),
        "columns": (["--table", "steps"], lambda: trajcheck.columns("steps")),
        "formats": ([], lambda: trajcheck.formats()),
        "draft-mapping": ([str(ROOT / "tests/fixtures/real/screenagent")],
                          lambda: trajcheck.draft_mapping(ROOT / "tests/fixtures/real/screenagent")),
        "timeline": ([str(ledger), RUN], lambda: trajcheck.timeline(ledger, RUN)),
        "diff": ([str(ledger), "--task", "newsletter-subscribe", "--by", "config.perceptual_verifier"],
                 lambda: trajcheck.diff(ledger, task="newsletter-subscribe", by="config.perceptual_verifier")),
        "compare": ([str(ledger), "--by", "config.perceptual_verifier"],
                    lambda: trajcheck.compare([ledger], by="config.perceptual_verifier")),
        "failures": ([str(ledger), "--by", "config.perceptual_verifier"],
                     lambda: trajcheck.failures(ledger, by="config.perceptual_verifier")),
        "check": ([str(ledger), "--max-false-claim-rate", "0.5", "--min-success", "0.4"],
                  lambda: trajcheck.check(ledger, max_false_claim_rate=0.5, min_success=0.4)),
        "agree": ([str(ledger), "--labels", str(labels)], lambda: trajcheck.agree(ledger, labels)),
        "judges": ([str(ledger), "--judgments", str(judged), "--labels", str(labels)],
                   lambda: trajcheck.judges(ledger, [judged], labels)),
        "flaky": ([str(ledger), "--by", "config.perceptual_verifier"],
                  lambda: trajcheck.flaky(ledger, by="config.perceptual_verifier")),
        "redo": ([str(ledger)], lambda: trajcheck.redo(ledger)),
        "export": ([str(ledger), "--table", "per-task"],
                   lambda: trajcheck.export_table(ledger, "per-task", "json")),
        # a report into a folder writes only what changed since the last: each call gets an empty folder
        "report": ([str(ledger), "--out", str(tmp / "rep"), "--max-runs", "3"],
                   lambda: (shutil.rmtree(tmp / "rep"), trajcheck.report(ledger, tmp / "rep", max_runs=3))[1]),
        "best-of": ([str(ledger)], lambda: trajcheck.best_of(ledger)),
        "draft-contract": ([str(ledger), "terms-checkbox-on"], lambda: trajcheck.draft_contract(ledger,
                                                                                              "terms-checkbox-on")),
        # compacting twice gives the same counts only from the same start: each call gets a fresh copy
        "compact": ([str(copy)], lambda: (shutil.rmtree(copy), shutil.copytree(ledger, copy),
                                          trajcheck.compact(copy))[-1]),
    }


def _json(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples become lists, a timestamp its text), as the command prints it."""
    return json.loads(json.dumps(plain(value), default=str))


def test_every_command_has_a_case_here(sample_ledger, tmp_path):
    assert set(_cases(sample_ledger, tmp_path)) | {"score"} == set(COMMANDS)


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"score"}))
def test_format_json_is_exactly_the_library_result(command, sample_ledger, tmp_path):
    args, call = _cases(sample_ledger, tmp_path)[command]
    if command == "compact":
        shutil.copytree(sample_ledger, tmp_path / "compact-copy")
    res = runner.invoke(app, [command, *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    expected = call()
    if command == "export":  # the export's JSON format is a text the function returns
        assert res.stdout == expected
        return
    assert printed == _json(expected)
    assert printed, "an empty result would make the comparison say nothing"


def test_score_json_is_the_score_result(tmp_path):
    runs = [SAMPLES / "consent-overlay-off", SAMPLES / "drift-loop-off"]
    res = runner.invoke(app, ["score", *map(str, runs), "--out", str(tmp_path / "A"), "-q", "--format", "json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    expected = _json(trajcheck.score(runs, out=tmp_path / "B"))
    for key in ("ledger", "elapsed"):  # where it was written and how long it took: the rest is the same
        printed.pop(key), expected.pop(key)
    assert printed == expected and len(printed["runs"]) == 2


@pytest.mark.slow
def test_validate_decides_what_was_readable_not_the_command(tmp_path):
    """The exit-3 rule (nothing readable) is the library's: a missing path, or files no reader claims."""
    assert trajcheck.validate([tmp_path / "nowhere"]).nothing_to_check
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "log.json").write_text("{}")
    found = trajcheck.validate([tmp_path / "logs"])
    assert found.nothing_to_check and found.runs == 0 and found.to_json()["errors"] == 1
    assert not trajcheck.validate([SAMPLES]).nothing_to_check
    res = runner.invoke(app, ["validate", str(tmp_path / "logs")])
    assert res.exit_code == 3


def test_export_writes_its_file_through_the_library(sample_ledger, tmp_path):
    out = tmp_path / "t.md"
    text = trajcheck.export_table(sample_ledger, out=out)
    assert out.read_text("utf-8") == text and "| all | 28 |" in text
    assert [p.name for p in tmp_path.iterdir()] == ["t.md"]  # no temporary file left beside it


def _api_names() -> list[str]:
    text = (ROOT / "docs" / "api.md").read_text("utf-8")
    return re.findall(r"^### `trajcheck\.(\w+)", text, flags=re.M)


def test_docs_api_names_every_public_name_and_each_imports():
    names = _api_names()
    assert set(names) == set(trajcheck.__all__) - {"__version__"}
    for name in names:
        assert getattr(trajcheck, name) is not None


def test_docs_api_is_generated_from_the_code():
    from devtools.apidoc import page

    assert (ROOT / "docs" / "api.md").read_text("utf-8") == page(), \
        "docs/api.md is stale: python -m devtools.apidoc > docs/api.md"
