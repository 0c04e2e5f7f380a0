"""Judges checked against the evidence (``trajcheck judges LEDGER``).

A judge is never evidence: each judge's verdicts are compared with what the ledger's evidence shows. Per judge:
coverage; against labels where given, precision, recall, the false-success rate (of the runs the labels fail, the
share the judge passes) and the false-failure rate (of the runs the labels pass, the share it fails), with Wilson
intervals; Cohen's kappa with every other judge; its flip rate over runs it judged more than once; its cost per
run where recorded. Then the **conflicts**: each run a judge passes while the evidence shows it failed, and each
run a judge fails while a contract passed or the benchmark's evaluator recorded a success, each with the step and
the evidence that show it. Evidence that is missing or undecided is never a conflict.

The evidence read (ledger columns): ``verdict_reason`` (``no_answer``: the run ended without an answer),
``evidence_reasons`` (``last_high_risk_no_effect@N``: the decisive action changed nothing;
``error_after_last_high_risk@N``: the page showed an error after it; ``no_net_progress@N``: the run came back to an
early screen and kept nothing; ``ends_blocked@N``: a blocking page on the final screen), ``det_verdict`` with
``contract_checks`` (a check with ``passed`` false; a failed ``text_present``/``text_matches``/``element_text``
check: the final screen lacks required text), ``claim_reason`` with ``claim_evidence`` and ``message_text``
(``agent_reported_failure``, ``message_admits_failure``: the agent's own answer admits failure),
``evaluator_verdict`` with ``outcome_score``, ``n_steps``, and ``steps.action_type``, ``steps.action_text``,
``steps.frame_post`` of the step shown.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..base import stats
from ..base.errors import UsageError
from ..base.reasons import ClaimReason, EvidenceCode, VerdictReason
from ..scoring.judgments.matching import JudgedRun, match, why_none
from ..store import ledger
from .judgeverdicts import Entry, dedupe, entries_from_ledger, verdicts as judge_verdicts

#: The contract checks of text the final screen must show.
TEXT_CHECKS = frozenset({"text_present", "text_matches", "element_text"})

#: Each kind of conflict, in the order they are listed for a run, and what it says.
CONFLICTS = {
    "no_answer": "the run ended without an answer",
    "dead_decisive_action": "the decisive action changed nothing",
    "error_after_decisive_action": "the page showed an error after the decisive action",
    "no_net_progress": "the run came back to an early screen and kept nothing it reached since",
    "blocking_page": "a blocking page is on the final screen",
    "contract_failed": "a contract check failed",
    "admits_failure": "the agent's own answer admits failure",
    "missing_text": "the final screen lacks text the contract requires",
}
#: Each kind of evidence that contradicts a judge's failure.
CONTRADICTIONS = {
    "contract_passed": "the contract passed",
    "evaluator_passed": "the benchmark's evaluator recorded a success",
}

_RUN_COLUMNS = ("run_id", "task_id", "run_path", "n_steps", "det_verdict", "contract_checks", "evaluator_verdict",
                "outcome_score", "verdict_reason", "evidence_reasons", "claim_reason", "claim_evidence",
                "message_text", "judgments")


def _load(ledger_dir: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], Any]:
    con = ledger.connect(ledger_dir)
    cur = con.execute(f"select {', '.join(_RUN_COLUMNS)} from runs where status = 'ok' order by run_id")
    runs = [dict(zip(_RUN_COLUMNS, r)) for r in cur.fetchall()]
    return runs, con


def _entries_from_paths(paths: list[Path], runs: list[dict[str, Any]]) -> tuple[list[Entry], list[dict[str, Any]]]:
    from ..scoring.judgments.formats import read_path

    refs = [JudgedRun(r["run_id"], r["run_path"], r["task_id"]) for r in runs]
    entries: list[Entry] = []
    report: list[dict[str, Any]] = []
    for p in paths:
        try:
            read = read_path(p)
        except (ValueError, OSError) as exc:
            raise UsageError(f"--judgments {p}: {exc}") from None
        m = match(read.judgments, refs)
        if not m.matched:
            raise UsageError(why_none(str(p), read.judgments, refs, m))
        report.append({**read.to_json(), "matching": m.to_json()})
        for j, rid, _how in m.matched:
            entries.append(Entry(j.judge, rid, j.verdict, j.where, j.sample, j.cost_usd, j.tokens, j.score,
                                 j.process_score, [c.to_json() for c in j.cited]))
    return entries, report


def _reason(code: str, reasons: list[str] | None) -> tuple[int | None, str] | None:
    """The step and evidence of the evidence referee's reason ``code`` (``code@step: evidence``), if it gave one."""
    for r in reasons or []:
        head, _, evidence = r.partition(": ")
        c, _, step = head.partition("@")
        if c == code:
            return (int(step) if step.isdigit() else None), evidence or c
    return None


def _failed_checks(r: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        checks = json.loads(r["contract_checks"]) if r.get("contract_checks") else []
    except ValueError:
        return []
    return [c for c in checks if isinstance(c, dict) and c.get("passed") is False]


def _check_text(c: dict[str, Any]) -> str:
    ev = c.get("evidence")
    detail = json.dumps(ev, sort_keys=True, ensure_ascii=False)[:300] if ev not in (None, {}, "") else ""
    return f"{c.get('type')} {c.get('name') or ''}".strip() + (f": {detail}" if detail else "")


def evidence_against_pass(r: dict[str, Any]) -> list[dict[str, Any]]:
    """What the run's evidence shows against a success: each conflict's kind, step and evidence (module
    docstring); empty when the evidence shows no failure, or is undecided."""
    last = r["n_steps"] or None
    out: list[dict[str, Any]] = []
    if r["verdict_reason"] == VerdictReason.NO_ANSWER:
        out.append({"kind": "no_answer", "step": last, "evidence": f"no DONE or answer (claim_reason "
                                                                   f"{r['claim_reason']})"})
    for kind, code in (("dead_decisive_action", EvidenceCode.LAST_HIGH_RISK_NO_EFFECT),
                       ("error_after_decisive_action", EvidenceCode.ERROR_AFTER_LAST_HIGH_RISK),
                       ("no_net_progress", EvidenceCode.NO_NET_PROGRESS),
                       ("blocking_page", EvidenceCode.ENDS_BLOCKED)):
        got = _reason(code, r["evidence_reasons"])
        if got is not None:
            out.append({"kind": kind, "step": got[0], "evidence": got[1]})
    if r["det_verdict"] == "fail":
        failed = _failed_checks(r)
        text = [c for c in failed if c.get("type") in TEXT_CHECKS]
        other = [c for c in failed if c.get("type") not in TEXT_CHECKS]
        if other or not text:
            out.append({"kind": "contract_failed", "step": last,
                        "evidence": "; ".join(_check_text(c) for c in other) or "the contract failed"})
        if text:
            out.append({"kind": "missing_text", "step": last, "evidence": "; ".join(_check_text(c) for c in text)})
    if r["claim_reason"] in (ClaimReason.AGENT_REPORTED_FAILURE, ClaimReason.MESSAGE_ADMITS_FAILURE):
        words = r["claim_evidence"] or r["message_text"] or r["claim_reason"]
        out.append({"kind": "admits_failure", "step": last, "evidence": str(words)})
    return out


def evidence_against_fail(r: dict[str, Any]) -> list[dict[str, Any]]:
    """What the run's evidence shows against a failure: a contract that passed, an evaluator's success."""
    last = r["n_steps"] or None
    out: list[dict[str, Any]] = []
    if r["det_verdict"] == "pass":
        out.append({"kind": "contract_passed", "step": last, "evidence": "every decisive contract check passed"})
    if r["evaluator_verdict"] == "pass":
        out.append({"kind": "evaluator_passed", "step": last,
                    "evidence": f"the evaluator's score {r['outcome_score']}"})
    return out


def against_evidence(judge: str, verdict: bool | None, r: dict[str, Any]) -> list[dict[str, Any]]:
    """What the evidence of run ``r`` (a runs row) shows against ``judge``'s ``verdict`` on it (True a success,
    None no verdict: nothing): each item its judge, run_id, what the judge said, kind, step and evidence."""
    if verdict is None:
        return []
    found = evidence_against_pass(r) if verdict else evidence_against_fail(r)
    return [{"judge": judge, "run_id": r["run_id"], "said": "pass" if verdict else "fail", **c} for c in found]


def _steps(con: Any, wanted: set[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
    """The action and frame of each (run, step) shown with a conflict."""
    if not wanted:
        return {}
    rids = sorted({rid for rid, _ in wanted})
    marks = ", ".join("?" for _ in rids)
    rows = con.execute(f"select run_id, step_index, action_type, action_text, frame_post from steps where run_id in "
                       f"({marks}) order by run_id, step_index", rids).fetchall()
    return {(r[0], r[1]): {"action": r[2], "action_text": r[3], "frame": r[4]} for r in rows if (r[0], r[1]) in wanted}


def _rate(r: stats.Rate) -> dict[str, Any]:
    return dict(r.to_json())


def judges(ledger_dir: str | os.PathLike[str], judgments: list[Path] | None = None,
           labels_path: str | os.PathLike[str] | None = None,
           max_false_success: float | None = None) -> dict[str, Any]:
    """Every judge of the ledger (``runs.judgments``) and of ``judgments`` (files or folders, matched to the
    ledger's runs) checked against the evidence and, given ``labels_path``, against labels (module docstring).
    UsageError when there is no judgment at all, when a path matches no run (saying why), and for
    ``max_false_success`` without labels."""
    from .agreement import read_labels

    if max_false_success is not None and labels_path is None:
        raise UsageError("--max-false-success needs --labels: a false-success rate is counted against labels")
    runs, con = _load(ledger_dir)
    try:
        given, sources = _entries_from_paths(list(judgments or []), runs)
        entries = dedupe(entries_from_ledger(runs) + given)
        if not entries:
            raise UsageError(f"{ledger_dir}: no judgments: give --judgments PATH, or score with --judgments")
        by_id = {r["run_id"]: r for r in runs}
        verdicts = judge_verdicts(entries)
        conflicts: list[dict[str, Any]] = []
        contradicted: list[dict[str, Any]] = []
        for judge, said in sorted(verdicts.items()):
            for rid, v in sorted(said.items()):
                for c in against_evidence(judge, v, by_id[rid]):
                    (conflicts if v else contradicted).append(c)
        wanted = {(c["run_id"], c["step"]) for c in conflicts + contradicted if c["step"] is not None}
        steps = _steps(con, wanted)
    finally:
        con.close()
    for c in conflicts + contradicted:
        c.update(steps.get((c["run_id"], c["step"]), {"action": None, "action_text": None, "frame": None}))
    truth: dict[str, bool] = {}
    labelled = 0
    if labels_path is not None:
        labels = read_labels(labels_path)
        labelled = sum(1 for rid in labels if rid in by_id)
        truth = {rid: lab.outcome == "pass" for rid, lab in labels.items() if rid in by_id and lab.outcome}
    rows = [_judge_row(judge, said, entries, len(runs), truth if labels_path is not None else None, conflicts,
                       contradicted) for judge, said in sorted(verdicts.items())]
    kappa = []
    names = sorted(verdicts)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = sorted(set(k for k, v in verdicts[a].items() if v is not None)
                          & set(k for k, v in verdicts[b].items() if v is not None))
            if both:
                k = stats.cohen_kappa([str(verdicts[a][x]) for x in both], [str(verdicts[b][x]) for x in both])
                kappa.append({"a": a, "b": b, "items": len(both), "kappa": None if k is None else round(k, 6)})
    return {"ledger": str(ledger_dir), "runs": len(runs), "labelled_runs": labelled if labels_path else None,
            "sources": sources, "judges": rows, "kappa": kappa, "conflicts": conflicts,
            "contradicted_failures": contradicted, "cheapest": _cheapest(rows, max_false_success)}


def _judge_row(judge: str, said: dict[str, bool | None], entries: list[Entry], n_runs: int,
               truth: dict[str, bool] | None, conflicts: list[dict[str, Any]],
               contradicted: list[dict[str, Any]]) -> dict[str, Any]:
    mine = [e for e in entries if e.judge == judge]
    samples: dict[str, set[str]] = {}
    for e in mine:
        samples.setdefault(e.run_id, set()).add(e.verdict)
    repeated = [rid for rid in samples if sum(1 for e in mine if e.run_id == rid) > 1]
    flipped = sum(1 for rid in repeated if len(samples[rid]) > 1)
    costs: dict[str, float] = {}
    tokens: dict[str, int] = {}
    for e in mine:
        if e.cost_usd is not None:
            costs[e.run_id] = costs.get(e.run_id, 0.0) + e.cost_usd
        if e.tokens is not None:
            tokens[e.run_id] = tokens.get(e.run_id, 0) + e.tokens
    decided = {rid: v for rid, v in said.items() if v is not None}
    row: dict[str, Any] = {
        "judge": judge, "judged": len(said), "coverage": _rate(stats.wilson(len(said), n_runs)),
        "passes": sum(1 for v in decided.values() if v), "fails": sum(1 for v in decided.values() if not v),
        "conflicts": len({c["run_id"] for c in conflicts if c["judge"] == judge}),
        "contradicted_failures": len({c["run_id"] for c in contradicted if c["judge"] == judge}),
        "flip": _rate(stats.wilson(flipped, len(repeated))),
        "cost_per_run": round(sum(costs.values()) / len(costs), 6) if costs else None,
        "tokens_per_run": round(sum(tokens.values()) / len(tokens), 1) if tokens else None,
        "labels": None}
    if truth is not None:
        pairs = [(decided[rid], t) for rid, t in truth.items() if rid in decided]
        tp = sum(1 for p, t in pairs if p and t)
        fp = sum(1 for p, t in pairs if p and not t)
        tn = sum(1 for p, t in pairs if not p and not t)
        fn = sum(1 for p, t in pairs if not p and t)
        row["labels"] = {"labelled": len(truth), "covered": len(pairs), "tp": tp, "fp": fp, "tn": tn, "fn": fn,
                         "precision": _rate(stats.wilson(tp, tp + fp)), "recall": _rate(stats.wilson(tp, tp + fn)),
                         "false_success": _rate(stats.wilson(fp, fp + tn)),
                         "false_failure": _rate(stats.wilson(fn, fn + tp))}
    return row


def _cheapest(rows: list[dict[str, Any]], bound: float | None) -> dict[str, Any] | None:
    """The judge of the lowest cost per run whose false-success rate (observed, against the labels) is at most
    ``bound``; None without a bound, and a judge=None answer when no judge with a recorded cost qualifies."""
    if bound is None:
        return None
    ok = [r for r in rows if r["cost_per_run"] is not None and r["labels"] is not None
          and r["labels"]["false_success"]["n"] and r["labels"]["false_success"]["rate"] <= bound]
    best = min(ok, key=lambda r: (r["cost_per_run"], r["judge"]), default=None)
    return {"max_false_success": bound, "judge": None if best is None else best["judge"],
            "cost_per_run": None if best is None else best["cost_per_run"],
            "false_success": None if best is None else best["labels"]["false_success"]}

