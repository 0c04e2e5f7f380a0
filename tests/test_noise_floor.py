"""Repeats and the noise floor (issue 50, item 1): `flaky` lists exactly the tasks whose verdict flips between
repeats, and `compare` calls a difference inside the noise floor inconclusive and one outside it significant.

The ledgers are the sample runs' verdicts copied into repeats (each sample run four times, config.seed 1-4), some
flipped. Every expected figure is computed here from its closed form (balanced one-way ANOVA for the ICC, Kish's
design effect, MDD = (z_0.975 + z_0.8) * SE), not copied from the output.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest

from trajcheck.store import ledger

from conftest import run_json

Z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
REPEATS = 4
#: The tasks whose fourth repeat is flipped (each of their runs' verdict turned round).
FLIPPED = {"create-workspace", "deals-search", "signup"}
#: The tasks that flip in the sample runs themselves: two runs of the same task under the same config that
#: disagree (sequencer-correct passes, sequencer-near-miss is uncertain; nc-register-navigation passes,
#: nc-server-validation fails).
NATURAL = {"sequencer-kick", "forge-register"}


@pytest.fixture(scope="module")
def sample_rows(sample_ledger: Path) -> list[dict[str, Any]]:
    con = ledger.connect(sample_ledger)
    try:
        cur = con.execute("select run_id, task_id, trial, eval_final_verdict, outcome_score, config from runs "
                          "where status = 'ok' order by run_id")
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    finally:
        con.close()


def _flip(verdict: str) -> str:
    return "fail" if verdict == "pass" else "pass"


def test_flaky_lists_exactly_the_flipped_tasks(sample_rows: list[dict[str, Any]], tmp_path: Path) -> None:
    rows = []
    for r in sample_rows:
        for seed in range(1, REPEATS + 1):
            verdict = r["eval_final_verdict"]
            if seed == REPEATS and r["task_id"] in FLIPPED:
                verdict = _flip(verdict)
            rows.append({"run_id": f"{r['run_id']}~{seed}", "task_id": r["task_id"], "status": "ok",
                         "eval_final_verdict": verdict, "outcome_score": None,
                         "config": json.dumps({**json.loads(r["config"] or "{}"), "seed": seed}, sort_keys=True)})
    ledger.write(tmp_path / "L", rows, [])
    got = run_json("flaky", str(tmp_path / "L"), "--repeat-key", "config.seed")
    assert got["flaky"] == sorted(FLIPPED | NATURAL)
    flips = [t for t in got["tasks"] if t["flips"]]
    # create-workspace and signup flip under both of their configs (the verifier on and off: each run was flipped
    # at seed 4); the label names the config key that sets a task's groups apart
    on_off = [f"perceptual_verifier={v}" for v in ("false", "true")]
    assert sorted((t["task_id"], t["config"]) for t in flips) == sorted(
        [("create-workspace", c) for c in on_off] + [("signup", c) for c in on_off]
        + [("deals-search", ""), ("sequencer-kick", ""), ("forge-register", "")])
    seq = next(t for t in flips if t["task_id"] == "sequencer-kick")
    # 8 repeats (two sample runs, four seeds each), 4 pass; k = 4, the fewest repeats of a repeated task
    assert (seq["repeats"], seq["passed"], seq["k"]) == (8, 4, 4)
    assert seq["pass_at_k"] == round(1 - math.comb(4, 4) / math.comb(8, 4), 6)
    assert seq["pass_hat_k"] == round(math.comb(4, 4) / math.comb(8, 4), 6)
    assert [r["run_id"] for r in seq["runs"]] == [f"sequencer-correct~{i}" for i in range(1, 5)] + \
        [f"sequencer-near-miss~{i}" for i in range(1, 5)]
    # without the repeat key, each seed is a config of its own: only the sample's own pairs of runs repeat
    got = run_json("flaky", str(tmp_path / "L"))
    assert got["flaky"] == sorted(NATURAL)
    # the CSV lists the flipping tasks with their runs
    from typer.testing import CliRunner
    from trajcheck.cli.main import app

    res = CliRunner().invoke(app, ["flaky", str(tmp_path / "L"), "--repeat-key", "config.seed", "-f", "csv"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "task_id,config,arm,repeats,passed,pass_rate,k,pass_at_k,pass_hat_k,runs"
    assert sorted({line.split(",")[0] for line in lines[1:]}) == sorted(FLIPPED | NATURAL)


def _icc_balanced(groups: list[list[float]]) -> float | None:
    """ICC(1) of equal-sized groups: (MSB - MSW) / (MSB + (m - 1) MSW)."""
    k, m = len(groups), len(groups[0])
    grand = sum(map(sum, groups)) / (k * m)
    msb = m * sum((sum(g) / m - grand) ** 2 for g in groups) / (k - 1)
    msw = sum((y - sum(g) / m) ** 2 for g in groups for y in g) / (k * (m - 1))
    return None if msb + (m - 1) * msw == 0 else (msb - msw) / (msb + (m - 1) * msw)


def _arms(sample_rows: list[dict[str, Any]], tmp_path: Path, m: int, flip: Any) -> tuple[Path, list[list[float]]]:
    """A ledger of two arms (config.arm base and new), each task of the samples run ``m`` times (trials 1..m) with
    the verdict of its first sample run; the new arm's verdict of (task, trial) flipped where ``flip`` says. Also
    the pairs' differences (new - base) by task."""
    first: dict[str, bool] = {}
    for r in sample_rows:
        first.setdefault(r["task_id"], r["eval_final_verdict"] == "pass")
    rows, diffs = [], []
    for task, ok in sorted(first.items()):
        d = []
        for trial in range(1, m + 1):
            new = (not ok) if flip(task, ok, trial) else ok
            for arm, passed in (("base", ok), ("new", new)):
                rows.append({"run_id": f"{arm}-{task}-{trial}", "task_id": task, "trial": trial, "status": "ok",
                             "eval_final_verdict": "pass" if passed else "fail",
                             "config": json.dumps({"arm": arm})})
            d.append(float(new) - float(ok))
        diffs.append(d)
    ledger.write(tmp_path, rows, [])
    return tmp_path, diffs


def _expected(diffs: list[list[float]]) -> dict[str, Any]:
    t, m = len(diffs), len(diffs[0])
    n = t * m
    psi = sum(d * d for g in diffs for d in g) / n
    icc = _icc_balanced(diffs)
    rho = max(0.0, icc or 0.0)
    se = math.sqrt(psi * (1 + (m - 1) * rho) / n)
    return {"diff": sum(map(sum, diffs)) / n, "psi": psi, "icc": icc, "rho": rho, "se": se, "mdd": Z * se,
            "t": t, "m": m}


def test_compare_calls_a_difference_inside_the_noise_floor_inconclusive(sample_rows: list[dict[str, Any]],
                                                                        tmp_path: Path) -> None:
    # the new arm passes one trial of one failing task (deals-search, trial 2) that the base arm failed: +1 pair
    path, diffs = _arms(sample_rows, tmp_path / "near", 2, lambda task, ok, trial: task == "deals-search"
                        and trial == 2)
    e = _expected(diffs)
    got = run_json("compare", str(path), "--by", "config.arm", "--baseline", "base")
    [pair] = got["paired"]
    noise = pair["noise_floor"]
    assert e["diff"] > 0 and e["diff"] < e["mdd"]
    # the repeats per task m' that would make this difference detectable: z^2 psi / T (rho + (1 - rho) / m') <=
    # d^2, so m' >= psi (1 - rho) / (T d^2 / z^2 - psi rho)
    need = math.ceil(e["psi"] * (1 - e["rho"]) / (e["t"] * e["diff"] ** 2 / Z ** 2 - e["psi"] * e["rho"]))
    assert noise == {"method": "paired", "difference": round(e["diff"], 6), "se": round(e["se"], 6),
                     "mdd": round(e["mdd"], 6), "verdict": "inconclusive", "repeats_per_task": need,
                     "more_repeats_per_task": need - 2, "reason": None,
                     "icc": [round(e["icc"], 6)], "design_effect": [round(1 + e["rho"], 6)]}
    assert need > 2


def test_compare_calls_a_difference_outside_the_noise_floor_significant(sample_rows: list[dict[str, Any]],
                                                                        tmp_path: Path) -> None:
    # the new arm passes every trial of every task the base arm failed: each task's pairs all alike (ICC 1)
    path, diffs = _arms(sample_rows, tmp_path / "far", 2, lambda task, ok, trial: not ok)
    e = _expected(diffs)
    assert e["icc"] == 1.0
    got = run_json("compare", str(path), "--by", "config.arm", "--baseline", "base")
    noise = got["paired"][0]["noise_floor"]
    assert noise == {"method": "paired", "difference": round(e["diff"], 6), "se": round(e["se"], 6),
                     "mdd": round(e["mdd"], 6), "verdict": "significant", "repeats_per_task": None,
                     "more_repeats_per_task": None, "reason": None, "icc": [1.0], "design_effect": [2.0]}
    assert e["diff"] >= e["mdd"]


def test_flaky_arm_noise_from_closed_forms(sample_rows: list[dict[str, Any]], tmp_path: Path) -> None:
    # one arm: every task run 2 times, the second trial of the failing tasks flipped to pass
    path, _ = _arms(sample_rows, tmp_path / "one", 2, lambda task, ok, trial: not ok and trial == 2)
    got = run_json("flaky", str(path), "--by", "config.arm", "--where", "json_extract_string(config, '$.arm') "
                   "= 'new'")
    [arm] = got["arms"]
    first: dict[str, bool] = {}
    for r in sample_rows:
        first.setdefault(r["task_id"], r["eval_final_verdict"] == "pass")
    groups = [[1.0, 1.0] if ok else [0.0, 1.0] for _, ok in sorted(first.items())]
    n, t = 2 * len(groups), len(groups)
    p = sum(map(sum, groups)) / n
    icc = _icc_balanced(groups)
    de = 1 + max(0.0, icc or 0.0)
    assert (arm["runs"], arm["tasks"], arm["repeated_tasks"]) == (n, t, t)
    assert arm["flip_rate"]["k"] == sum(1 for ok in first.values() if not ok)
    assert arm["icc"] == round(icc, 6) and arm["design_effect"] == round(de, 6)
    assert arm["mdd"] == round(Z * math.sqrt(2 * p * (1 - p) * de / n), 6)


def test_compare_csv_gives_the_noise_floor_as_json_does(sample_rows: list[dict[str, Any]], tmp_path: Path) -> None:
    """`compare --format csv` carries each arm's paired difference and its noise floor, the figures of the JSON."""
    import csv
    import io

    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    path, _ = _arms(sample_rows, tmp_path / "near", 2, lambda task, ok, trial: task == "deals-search" and trial == 2)
    got = run_json("compare", str(path), "--by", "config.arm", "--baseline", "base")
    noise = got["paired"][0]["noise_floor"]
    res = CliRunner().invoke(app, ["compare", str(path), "--by", "config.arm", "--baseline", "base", "-f", "csv"])
    assert res.exit_code == 0, res.output
    rows = {r["arm"]: r for r in csv.DictReader(io.StringIO(res.stdout))}
    assert rows["base"]["paired_noise_floor_mdd"] == ""  # the baseline is not paired against itself
    new = rows["new"]
    assert new["paired_baseline"] == "base" and int(new["paired_pairs"]) == got["paired"][0]["pairs"]
    assert float(new["paired_noise_floor_mdd"]) == noise["mdd"]
    assert new["paired_noise_floor_verdict"] == "inconclusive"
    assert int(new["paired_noise_floor_repeats_per_task"]) == noise["repeats_per_task"]
    assert int(new["paired_noise_floor_more_repeats_per_task"]) == noise["more_repeats_per_task"]
    assert float(new["paired_noise_floor_icc_1"]) == noise["icc"][0]
