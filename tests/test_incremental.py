"""Re-scoring into an existing ledger: unchanged runs are skipped, changed ones replaced once,
new runs appended without rewriting old parts, deleted runs dropped."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from trajcheck.store import ledger
from trajcheck.analyzers.perceptual import PerceptualOptions
from trajcheck.cli.main import app
from trajcheck.scoring.pipeline import ScoreOptions, score_paths

from conftest import SAMPLES as SAMPLE_DIR, read_steps, sample_run_dirs

NAMES = ["consent-overlay-on", "terms-checkbox-off", "validation-flash-on"]


def _score(root, out, opts=None):
    report = score_paths([root], opts, jobs=1, previous=ledger.previous(out))
    if report.results or report.removed:
        ledger.write(out, [r.run for r in report.results], [s for r in report.results for s in r.steps],
                     remove=report.removed)
    return report


def _counts(out):
    return ledger.query(out, "select (select count(*) from runs), (select count(*) from steps)").rows[0]


@pytest.fixture
def corpus(tmp_path, samples):
    root = tmp_path / "runs"
    for name in NAMES:
        shutil.copytree(samples / name, root / name)
    out = tmp_path / "L"
    first = _score(root, out)
    assert len(first.results) == 3 and not first.skipped
    return root, out


def _generation(out):
    return json.loads((out / "manifest.json").read_text())["generation"]


@pytest.mark.slow
def test_unchanged_runs_are_skipped_and_nothing_is_written(corpus):
    root, out = corpus
    before = _counts(out)
    again = _score(root, out)
    assert again.results == [] and sorted(again.skipped) == sorted(NAMES)
    assert _generation(out) == 1 and _counts(out) == before


def test_a_rescore_with_nothing_to_do_prints_the_ledgers_verdicts_and_no_empty_table(corpus):
    root, out = corpus
    res = CliRunner().invoke(app, ["score", str(root), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    assert res.stdout == ""  # no table of nothing
    # consent-overlay-on and validation-flash-on pass; terms-checkbox-off fails, a false claim
    assert "3 unchanged runs skipped" in res.stderr and "the ledger holds 3 runs" in res.stderr
    assert "verdicts: 2 pass, 1 fail; 1 false claim" in res.stderr
    assert "verdict for 3 of 3 runs" in res.stderr


def test_a_touched_but_identical_file_does_not_force_a_rescore(corpus):
    root, out = corpus
    f = root / NAMES[0] / "frames" / "001.png"
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
    assert _score(root, out).results == []


@pytest.mark.slow
def test_a_changed_frame_rescores_that_run_only_and_replaces_its_rows_once(corpus):
    root, out = corpus
    before = _counts(out)
    run = root / NAMES[1]
    steps = read_steps(run)
    # New content after the dead click, and still there in the frames after it (else it would
    # be content that appears and vanishes on its own: ambient).
    for rel in {steps[0]["frames"]["post"], *(f for s in steps[1:] for f in s["frames"].values())}:
        px = np.asarray(Image.open(run / rel).convert("RGB")).copy()
        px[400:460, 500:700] = (200, 30, 30)
        Image.fromarray(px).save(run / rel)
    again = _score(root, out)
    assert [r.run["run_id"] for r in again.results] == [NAMES[1]]
    assert sorted(again.skipped) == sorted([NAMES[0], NAMES[2]])
    assert _counts(out) == before
    row = ledger.query(out, f"select action_effect_observed from steps where run_id = '{NAMES[1]}' "
                            "and step_index = 1").rows
    assert row == [(True,)]  # the recomputation saw the new pixels


@pytest.mark.slow
def test_a_changed_option_rescores_everything(corpus):
    root, out = corpus
    again = _score(root, out, ScoreOptions(PerceptualOptions(threshold=5)))
    assert len(again.results) == 3 and again.skipped == []


@pytest.mark.slow
def test_a_new_run_is_appended_without_rewriting_old_parts(corpus, samples):
    root, out = corpus
    old_parts = json.loads((out / "manifest.json").read_text())["tables"]
    shutil.copytree(samples / "drift-loop-off", root / "drift-loop-off")
    again = _score(root, out)
    assert [r.run["run_id"] for r in again.results] == ["drift-loop-off"]
    parts = json.loads((out / "manifest.json").read_text())["tables"]
    for table in ("runs", "steps"):
        assert parts[table][: len(old_parts[table])] == old_parts[table]  # kept as they were
        assert len(parts[table]) == len(old_parts[table]) + 1
    assert _counts(out)[0] == 4


@pytest.mark.slow
def test_a_deleted_run_is_dropped(corpus):
    root, out = corpus
    shutil.rmtree(root / NAMES[2])
    again = _score(root, out)
    assert again.removed == [NAMES[2]] and again.results == []
    ids = [r[0] for r in ledger.query(out, "select run_id from runs order by 1").rows]
    assert ids == sorted(NAMES[:2])
    assert ledger.query(out, f"select count(*) from steps where run_id = '{NAMES[2]}'").rows == [(0,)]


@pytest.mark.slow
def test_runs_scored_from_another_folder_are_not_dropped(corpus, tmp_path, samples):
    root, out = corpus
    other = tmp_path / "other"
    shutil.copytree(samples / "drift-loop-on", other / "drift-loop-on")
    _score(other, out)
    again = _score(root, out)  # scoring root again must not touch runs found under other/
    assert again.removed == []
    assert _counts(out)[0] == 4


@pytest.mark.slow
def test_compact_merges_parts_and_keeps_every_row(corpus, samples):
    root, out = corpus
    shutil.copytree(samples / "drift-loop-off", root / "drift-loop-off")
    _score(root, out)
    before = ledger.query(out, "select * from steps order by run_id, step_index").rows
    res = CliRunner().invoke(app, ["compact", str(out)])
    assert res.exit_code == 0, res.output
    parts = json.loads((out / "manifest.json").read_text())["tables"]
    assert all(len(v) == 1 for v in parts.values())
    assert ledger.query(out, "select * from steps order by run_id, step_index").rows == before
    assert sorted(p.name for p in (out / "steps").iterdir()) == [os.path.basename(parts["steps"][0])]


@pytest.mark.slow
def test_force_rescores_unchanged_runs(corpus):
    root, out = corpus
    res = CliRunner().invoke(app, ["score", str(root), "--out", str(out), "-q", "--force", "-f", "json"])
    assert res.exit_code == 0, res.output
    again = CliRunner().invoke(app, ["score", str(root), "--out", str(out), "-q", "-f", "json"])
    assert again.exit_code == 0
    assert len(json.loads(res.stdout)["runs"]) == 3
    assert json.loads(again.stdout)["runs"] == [] and len(json.loads(again.stdout)["skipped"]) == 3


def test_frames_with_the_same_bytes_are_decoded_once(tmp_path, monkeypatch):
    """A screenshot saved again under a new name (nothing changed) shares the first file's decode; the
    step's findings are the same as a byte-for-byte diff gives."""
    import shutil

    from trajcheck.scoring import loading
    from trajcheck.scoring.pipeline import score_paths

    run = tmp_path / "dark-faint-and-toast"
    shutil.copytree(SAMPLE_DIR / "dark-faint-and-toast", run)
    before = {r["step_index"]: r for r in score_paths([run], jobs=1).results[0].steps}
    shutil.copy(run / "frames" / "001.png", run / "frames" / "002.png")  # step 1's post = its pre, new name
    decoded: list[str] = []
    real = loading.decode
    monkeypatch.setattr(loading, "decode",
                        lambda path, data=None, like=None: decoded.append(path.name) or real(path, data, like))
    after = score_paths([run], jobs=1).results[0].steps
    assert decoded.count("002.png") == 0 and decoded.count("001.png") == 1
    s1 = next(r for r in after if r["step_index"] == 1)
    assert s1["effect_changed_px"] == 0 and s1["frame_pre_phash"] == s1["frame_post_phash"]
    assert before[1]["effect_changed_px"] > 0  # the recorded post frame did change
