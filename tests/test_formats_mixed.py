"""Issue 14: a folder mixing every format trajcheck reads scores into one ledger."""

from __future__ import annotations

import shutil

import pytest

import trajcheck

from conftest import ROOT, SAMPLES

FIX = ROOT / "tests" / "fixtures"
REAL = ROOT.parent / "shared" / "realruns"


@pytest.mark.realruns
def test_a_folder_mixing_every_format_scores_into_one_ledger(tmp_path):
    mixed = tmp_path / "mixed"
    copies = {
        "native": SAMPLES / "nc-profile-toast",
        "anthropic": FIX / "anthropic" / "profile-sparse",
        "openai": FIX / "openai" / "cua-newsletter",
        "uitars": FIX / "ui_tars" / "workspace",
        "trace": FIX / "playwright_trace" / "notes-trace",
        "osworld": next(p.parent for p in (FIX / "osworld").rglob("traj.jsonl")),
        "browser-use": next(p.parent for p in (FIX / "browser_use_new").rglob("*.json")),
    }
    want = {"trajcheck.run/1", "anthropic-messages", "openai-responses", "ui-tars", "playwright-trace", "osworld",
            "browser-use"}
    if REAL.is_dir():  # third-party runs, read in place from ../shared (never copied into the project)
        copies["webvoyager"] = REAL / "webvoyager" / "taskGitHub--0"
        copies["browsergym"] = next(p for p in (REAL / "browsergym-fork").iterdir() if p.is_dir())
        want |= {"webvoyager", "browsergym"}
    for name, src in copies.items():
        shutil.copytree(src, mixed / name)
    result = trajcheck.score([mixed], out=tmp_path / "ledger", jobs=2)
    assert not result.invalid
    runs = trajcheck.runs(tmp_path / "ledger")
    assert set(runs["source_format"]) == want and len(runs) == len(copies)
