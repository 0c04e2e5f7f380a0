"""Issue 47 item 2: how runs end is declared, never assumed. A run that ended without an answer is failed
(``no_answer``) only where its format declares that its harness ends runs only by the agent's answer or a limit
(``ends = answer``); where the harness may stop a run itself (``external``) it is unknown (``harness_may_stop``),
and where nothing declares it, unknown too (``ends_undeclared``). The declaration is the run's own (run.json
``ends``), else its reader's (a built-in reader's, a mapping's ``[run] ends``); a draft never declares it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import trajcheck
from trajcheck.base.errors import UsageError
from trajcheck.base.verdicts import ENDS
from trajcheck.readers.discovery import NATIVE, readers
from trajcheck.readers.kit.reader import Reader
from trajcheck.readers.mapping.draft.compose import draft
from trajcheck.readers.mapping.schema import Mapping
from trajcheck.scoring.noanswer import declared_ends
from trajcheck.scoring.pipeline import ScoreOptions, score_paths

from conftest import SAMPLES

SQL = "select run_id, eval_final_verdict, verdict_source, verdict_reason, failure_mode from runs order by run_id"


def _native(tmp: Path, name: str, *, ends: str | None, cut: bool = True) -> Path:
    """The inbox sample run as ``name``: cut before its DONE (as a step budget cuts it) unless ``cut`` is False,
    no recorded status, and run.json ``ends`` when given."""
    dst = tmp / name
    shutil.copytree(SAMPLES / "nc-inbox-read", dst)
    meta = json.loads((dst / "run.json").read_text())
    meta.update(run_id=name, outcome={})
    if ends is not None:
        meta["ends"] = ends
    (dst / "run.json").write_text(json.dumps(meta))
    if cut:
        lines = (dst / "steps.jsonl").read_text().splitlines()
        (dst / "steps.jsonl").write_text(lines[0] + "\n")
    return dst


def _verdicts(*runs: Path) -> dict[str, tuple[str, str, str]]:
    rows = score_paths(list(runs), ScoreOptions(), jobs=1).results
    return {r.run["run_id"]: (r.run["eval_final_verdict"], r.run["verdict_source"], r.run["verdict_reason"])
            for r in rows}


def test_a_native_run_fails_for_no_answer_only_where_it_declares_its_harness_ends_runs_by_an_answer(tmp_path):
    got = _verdicts(_native(tmp_path, "answer", ends="answer"), _native(tmp_path, "external", ends="external"),
                    _native(tmp_path, "undeclared", ends=None))
    assert got["answer"] == ("fail", "no_answer", "no_answer")
    assert got["external"] == ("unknown", "none", "harness_may_stop")
    assert got["undeclared"] == ("unknown", "none", "ends_undeclared")


def test_a_runs_verdict_does_not_depend_on_the_other_runs_of_the_batch(tmp_path):
    """The batch heuristic is gone: an undeclared cut run beside a run that answered is not failed, and a run
    declared ``answer`` alone, in a batch where no run answered, is."""
    answered = _native(tmp_path, "answered", ends=None, cut=False)
    assert _verdicts(answered, _native(tmp_path, "undeclared", ends=None))["undeclared"][2] == "ends_undeclared"
    assert _verdicts(_native(tmp_path, "alone", ends="answer"))["alone"][:2] == ("fail", "no_answer")


def test_a_run_held_for_its_ending_has_no_failure_mode_and_is_no_false_claim(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    _native(d, "external", ends="external")
    trajcheck.score([d], tmp_path / "L", jobs=1)
    [row] = trajcheck.query(tmp_path / "L", SQL).to_json()
    assert (row["eval_final_verdict"], row["verdict_reason"], row["failure_mode"]) == ("unknown", "harness_may_stop",
                                                                                        None)


def test_the_run_declaration_wins_over_the_readers_and_the_readers_stands_when_the_run_says_nothing(tmp_path):
    run, _ = NATIVE.read(_native(tmp_path, "r", ends=None), "r")
    external = Reader(name="x", claims=lambda p: False, read=NATIVE.read, ends="external")
    assert declared_ends(run, external).ends == "external"
    assert declared_ends(run, NATIVE).ends is None
    own, _ = NATIVE.read(_native(tmp_path, "own", ends="answer"), "own")
    assert declared_ends(own, external).ends == "answer"


def test_every_built_in_reader_declares_how_its_harness_ends_a_run_and_why():
    """The native format is written by any harness: it declares nothing, and each run says it (run.json)."""
    declared = {r.name: r.ends for r in readers() if not r.name.startswith("mapping:")}
    assert declared.pop("trajcheck.run/1") is None
    assert declared and all(v in ENDS for v in declared.values()), declared
    for r in readers():
        assert r.doc is not None and len(r.doc.ends) > 40, r.name  # the sentence that says why
    # what the harnesses' own loops do: WebVoyager stops on ANSWER or --max_iter, OSWorld on DONE/FAIL or max
    # steps; BrowserGym's task validate() may end an episode, browser-use and UI-TARS-desktop may be stopped
    assert declared["webvoyager"] == declared["osworld"] == "answer"
    assert declared["browsergym"] == declared["browser-use"] == declared["ui-tars"] == "external"


def test_the_formats_page_says_how_each_format_ends_a_run():
    page = (Path(__file__).resolve().parent.parent / "docs" / "formats.md").read_text()
    assert page.count("How a run ends: ") == sum(1 for r in readers() if r.doc is not None)
    assert "How a run ends: `answer`. WebVoyager's" in page


# --- mapping files -------------------------------------------------------------------------------------------

MAPPING = """[run]
files = "log.json"
steps = "steps"
goal = "task"
screen = [1280, 800]
{ends}

[step]
type = "action"
screenshot = "shot"

[step.types]
read = "READ"
finish = "DONE"
"""


def _logs(tmp: Path) -> Path:
    """Two runs of a harness read through a mapping: one that answered (``finish``), one cut before it."""
    src = SAMPLES / "nc-inbox-read" / "frames"
    root = tmp / "logs"
    for name, steps in (("answered", [("read", "001.png"), ("finish", "002.png")]), ("cut", [("read", "001.png")])):
        d = root / name
        d.mkdir(parents=True)
        for shot in ("001.png", "002.png", "003.png"):  # the screen after the last step is the next file
            shutil.copy(src / shot, d / shot)
        log = {"task": "Who sent the newest message?", "steps": [{"action": a, "shot": s} for a, s in steps]}
        (d / "log.json").write_text(json.dumps(log))
    return root


@pytest.mark.parametrize("ends,verdict", [('ends = "answer"', ("fail", "no_answer")),
                                          ('ends = "external"', ("unknown", "harness_may_stop")),
                                          ("", ("unknown", "ends_undeclared"))])
def test_a_mapping_declares_how_its_harness_ends_a_run(tmp_path, ends, verdict):
    m = tmp_path / "h.toml"
    m.write_text(MAPPING.format(ends=ends))
    trajcheck.score([_logs(tmp_path)], tmp_path / "L", mapping=m, jobs=1)
    rows = {r["run_id"]: r for r in trajcheck.query(tmp_path / "L", SQL).to_json()}
    assert (rows["cut"]["eval_final_verdict"], rows["cut"]["verdict_reason"]) == verdict
    assert rows["answered"]["verdict_reason"] not in ("no_answer", "harness_may_stop", "ends_undeclared")


def test_a_mapping_that_declares_ends_wrongly_is_a_usage_error(tmp_path):
    m = tmp_path / "h.toml"
    m.write_text(MAPPING.format(ends='ends = "done"'))
    with pytest.raises(UsageError, match=r"\[run\] ends = 'done': one of answer, external"):
        Mapping(m)


def test_a_draft_never_declares_ends_but_writes_the_key_with_its_evidence(tmp_path):
    d = draft(_logs(tmp_path))
    assert _mapping_of(tmp_path, d.text).ends is None  # commented out: not declared
    [line] = [ln for ln in d.text.splitlines() if "ends = " in ln]
    assert line.startswith("# ends = ") and "1 of 2 sampled runs end in an answer" in line
    assert any(u.startswith("ends: how the harness ends a run is not declared") for u in d.unsure)


def test_the_drafts_evidence_suggests_answer_only_when_every_sampled_run_answered(tmp_path):
    root = _logs(tmp_path)
    shutil.rmtree(root / "cut")
    [line] = [ln for ln in draft(root).text.splitlines() if "ends = " in ln]
    assert line.startswith('# ends = "answer"') and "1 of 1 sampled runs end in an answer" in line
    shutil.rmtree(root / "answered")
    _logs(tmp_path / "again")
    shutil.rmtree(tmp_path / "again" / "logs" / "answered")
    [line] = [ln for ln in draft(tmp_path / "again" / "logs").text.splitlines() if "ends = " in ln]
    assert line.startswith('# ends = "external"') and "0 of 1 sampled runs end in an answer" in line


def _mapping_of(tmp: Path, text: str) -> Mapping:
    p = tmp / "drafted.toml"
    p.write_text(text)
    return Mapping(p)
