"""How good are the verdicts? Agreement of every verdict source with expert labels.

Labels: JSON ``{run_id: {task_id, outcome: pass|fail, claims_success, steps:
{"<index>": {effect: true|false|null, kind}}}}``, or ``{run_id: OUTCOME}`` alone; or a
CSV with columns ``run_id, task_id, outcome, claims_success, step_index, effect,
kind`` (one row per step; run-level fields may repeat or stand on a row with an
empty step_index; ``label`` or ``success`` may name the outcome's column). An
outcome is written as people write it (:data:`OUTCOMES`): pass, success, true, 1,
yes for a success; fail, failure, false, 0, no for a failure; in any case. The
positive class is "pass" for run verdicts and "the action had a visible effect"
for the per-step verifier; NPV and TNR are how well a source
catches failures.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..store import ledger
from ..base import stats
from .comparison import outcome_of
from ..base.errors import UsageError


@dataclass(frozen=True)
class Label:
    run_id: str
    task_id: str | None
    outcome: str | None  # pass | fail
    claims_success: bool | None
    steps: dict[int, bool | None]  # step index -> effect


def _bool(v: Any) -> bool | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("true", "1", "yes", "pass"):
        return True
    if s in ("false", "0", "no", "fail"):
        return False
    raise ValueError(f"not a boolean: {v!r}")


#: A label's outcome as people write it, lower-cased: the words and values for a success and for a failure.
OUTCOMES = {"pass": "pass", "passed": "pass", "success": "pass", "succeeded": "pass", "true": "pass", "1": "pass",
            "yes": "pass", "fail": "fail", "failed": "fail", "failure": "fail", "false": "fail", "0": "fail",
            "no": "fail"}

#: The CSV columns that may hold a run's outcome, in the order they are looked for.
OUTCOME_COLUMNS = ("outcome", "label", "success")


def _outcome(v: Any) -> str | None:
    """A label's outcome (``pass`` or ``fail``) from a bool, 1/0 or a word of :data:`OUTCOMES`; None if empty."""
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return "pass" if v else "fail"
    if isinstance(v, (int, float)) and v in (0, 1):
        return "pass" if v == 1 else "fail"
    got = OUTCOMES.get(str(v).strip().lower()) if isinstance(v, (str, int)) else None
    if got is None:
        raise ValueError(f"outcome must be one of pass/fail, success/failure, true/false, 1/0, not {v!r}")
    return got


def read_labels(path: str | os.PathLike[str]) -> dict[str, Label]:
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p}: cannot read labels ({exc})") from None
    out: dict[str, Label] = {}
    if p.suffix.lower() == ".csv":
        runs: dict[str, dict[str, Any]] = {}
        for n, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            rid = row.get("run_id")
            if not rid:
                raise UsageError(f"{p}:{n}: run_id is empty")
            r = runs.setdefault(rid, {"task_id": None, "outcome": None, "claims_success": None, "steps": {}})
            try:
                if row.get("task_id"):
                    r["task_id"] = row["task_id"]
                said = next((row[k] for k in OUTCOME_COLUMNS if row.get(k)), None)
                if said:
                    r["outcome"] = _outcome(said)
                if row.get("claims_success"):
                    r["claims_success"] = _bool(row["claims_success"])
                if row.get("step_index"):
                    r["steps"][int(row["step_index"])] = _bool(row.get("effect"))
            except ValueError as exc:
                raise UsageError(f"{p}:{n}: {exc}") from None
        items = list(runs.items())
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{p}: not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise UsageError(f"{p}: expected an object {{run_id: label}}")
        items = []
        for rid, d in data.items():
            if not isinstance(d, dict):  # {run_id: true}, {run_id: "pass"}: the outcome alone
                d = {"outcome": d}
            try:
                steps = {int(k): _bool((v or {}).get("effect")) for k, v in (d.get("steps") or {}).items()}
            except (ValueError, AttributeError) as exc:
                raise UsageError(f"{p}: {rid}: bad steps ({exc})") from None
            try:
                outcome = _outcome(d.get("outcome"))
            except ValueError as exc:
                raise UsageError(f"{p}: {rid}: {exc}") from None
            items.append((rid, {"task_id": d.get("task_id"), "outcome": outcome,
                                "claims_success": d.get("claims_success"), "steps": steps}))
    for rid, d in items:
        out[rid] = Label(rid, d["task_id"], d["outcome"], d["claims_success"], d["steps"])
    return out


@dataclass
class Scores:
    source: str
    level: str  # run | step
    labelled: int  # items with a label
    covered: int  # of those, items the source gave a verdict on
    tp: int
    fp: int
    tn: int
    fn: int

    def to_json(self) -> dict[str, Any]:
        prec = stats.wilson(self.tp, self.tp + self.fp)
        rec = stats.wilson(self.tp, self.tp + self.fn)
        npv = stats.wilson(self.tn, self.tn + self.fn)
        tnr = stats.wilson(self.tn, self.tn + self.fp)
        p, r = prec.value, rec.value
        f1 = None if not p or not r else 2 * p * r / (p + r)
        return {"source": self.source, "level": self.level, "labelled": self.labelled, "covered": self.covered,
                "tp": self.tp, "fp": self.fp, "tn": self.tn, "fn": self.fn,
                "precision": prec.to_json(), "recall": rec.to_json(), "f1": None if f1 is None else round(f1, 6),
                "npv": npv.to_json(), "tnr": tnr.to_json()}


def _score(source: str, level: str, pairs: list[tuple[bool | None, bool | None]]) -> Scores:
    labelled = [(p, t) for p, t in pairs if t is not None]
    covered = [(p, t) for p, t in labelled if p is not None]
    return Scores(source, level, len(labelled), len(covered),
                  sum(1 for p, t in covered if p and t), sum(1 for p, t in covered if p and not t),
                  sum(1 for p, t in covered if not p and not t), sum(1 for p, t in covered if not p and t))


#: Each run-level verdict source as True (pass), False (fail) or None (no verdict), from a runs row.
RUN_SOURCES: dict[str, Callable[[dict[str, Any]], bool | None]] = {
    "contract": lambda r: {"pass": True, "fail": False}.get(r["det_verdict"]),
    "judge": lambda r: {"pass": True, "fail": False}.get(r["judge_verdict"]),
    "evaluator": lambda r: {"pass": True, "fail": False}.get(r["evaluator_verdict"]),
    "evidence": lambda r: {"pass": True, "fail": False}.get(r["evidence_verdict"]),
    "final_verdict": lambda r: {"pass": True, "fail": False, "uncertain": False}.get(r["eval_final_verdict"]),
    "self_reported": lambda r: r["claimed_success"],
}


def agree(ledger_dir: str | os.PathLike[str], labels_path: str | os.PathLike[str]) -> dict[str, Any]:
    labels = read_labels(labels_path)
    con = ledger.connect(ledger_dir)
    try:
        cur = con.execute("select run_id, task_id, trial, status, det_verdict, judge_verdict, evaluator_verdict, "
                          "evidence_verdict, eval_final_verdict, verdict_source, "
                          "claimed_success, outcome_score, judgments from runs where status = 'ok' order by run_id")
        cols = [d[0] for d in cur.description]
        runs = [dict(zip(cols, r)) for r in cur.fetchall()]
        steps = con.execute("select run_id, step_index, action_effect_observed, action_effect_observed_seed "
                            "from steps order by run_id, step_index").fetchall()
    finally:
        con.close()
    by_id = {r["run_id"]: r for r in runs}
    matched = [rid for rid in labels if rid in by_id]
    truth = {rid: None if labels[rid].outcome is None else labels[rid].outcome == "pass" for rid in matched}
    sources = [_score(name, "run", [(f(by_id[rid]), truth[rid]) for rid in matched]) for name, f in RUN_SOURCES.items()]
    step_pairs: dict[str, list[tuple[bool | None, bool | None]]] = {"perceptual_verifier": [],
                                                                     "perceptual_verifier_seed": []}
    for rid, idx, ours, seed in steps:
        lab = labels.get(rid)
        if lab is None or idx not in lab.steps:
            continue
        step_pairs["perceptual_verifier"].append((ours, lab.steps[idx]))
        step_pairs["perceptual_verifier_seed"].append((seed, lab.steps[idx]))
    sources += [_score(k, "step", v) for k, v in step_pairs.items()]

    confusion: dict[str, dict[str, int]] = {}
    for r in runs:
        row = confusion.setdefault(r["det_verdict"] or "not_applicable", {})
        j = r["judge_verdict"] or "none"
        row[j] = row.get(j, 0) + 1
    kappa = []
    names = list(RUN_SOURCES)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            xs, ys = [], []
            for r in runs:
                va, vb = RUN_SOURCES[a](r), RUN_SOURCES[b](r)
                if va is not None and vb is not None:
                    xs.append(str(va))
                    ys.append(str(vb))
            if not xs:  # two sources that never both decided a run: nothing to agree on
                continue
            k = stats.cohen_kappa(xs, ys)
            kappa.append({"a": a, "b": b, "items": len(xs), "kappa": None if k is None else round(k, 6)})
    from ..base.verdicts import coverage

    return {"verdicts": coverage(runs).to_json(), "labels": len(labels), "matched_runs": len(matched),
            "unmatched_labels": sorted(set(labels) - set(by_id)),
            "sources": [s.to_json() for s in sources],
            "contract_vs_judge": {k: dict(sorted(v.items())) for k, v in sorted(confusion.items())},
            "kappa": kappa, "trials": trials(runs), "judges": judges(runs, truth)}


_PF = {"pass": True, "fail": False}
#: What each judge of ``score --judgments`` is checked against: the labels, and the programmatic sources.
JUDGE_REFERENCES: dict[str, Callable[[dict[str, Any], dict[str, bool | None]], bool | None]] = {
    "labels": lambda r, truth: truth.get(r["run_id"]),
    "contract": lambda r, truth: _PF.get(r["det_verdict"]),
    "evaluator": lambda r, truth: _PF.get(r["evaluator_verdict"]),
}


def judges(runs: list[dict[str, Any]], truth: dict[str, bool | None]) -> list[dict[str, Any]]:
    """Each judge of ``score --judgments`` (``runs.judgments``) against the labels (``truth``: run_id -> pass),
    the contracts and the evaluators, with "pass" the positive class: precision, recall and the rest, over the
    runs both the judge and the reference decided (``covered`` of those the reference decided, ``labelled``)."""
    verdicts: dict[str, dict[str, bool]] = {}
    for r in runs:
        for j in json.loads(r["judgments"]) if r.get("judgments") else []:
            verdicts.setdefault(j["judge"], {})[r["run_id"]] = j["verdict"] == "pass"
    out = []
    for name, said in sorted(verdicts.items()):
        for against, ref in JUDGE_REFERENCES.items():
            pairs = [(said.get(r["run_id"]), ref(r, truth)) for r in runs]
            out.append({"judge": name, "against": against, **_score(name, "run", pairs).to_json()})
    return out


def trials(runs: list[dict[str, Any]], success_score: float = 1.0) -> dict[str, Any]:
    """pass@k and pass^k per task over its repeated trials, and the flaky tasks."""
    per: dict[str, list[bool]] = {}
    for r in runs:
        per.setdefault(r["task_id"] or r["run_id"], []).append(outcome_of(r, success_score)[0])
    k = min((len(v) for v in per.values()), default=0)
    rows = []
    for task, outs in sorted(per.items()):
        n, c = len(outs), sum(outs)
        rows.append({"task_id": task, "trials": n, "passed": c, "pass@1": stats.pass_at_k(n, c, 1),
                     f"pass@{k}": stats.pass_at_k(n, c, k) if k else None,
                     f"pass^{k}": stats.pass_hat_k(n, c, k) if k else None, "flaky": 0 < c < n})
    return {"k": k, "tasks": rows, "flaky": [r["task_id"] for r in rows if r["flaky"]]}
