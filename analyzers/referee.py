"""The referee: the visual judge, the final verdict and what follows from it (pure).

Three sources can decide, strongest first. The programmatic checks of the final state are the
outcome contract and the benchmark's own evaluator (its recorded score, pass at ``EVALUATOR_PASS``).
Next comes the visual judge. The evidence referee (:mod:`trajcheck.analyzers.evidence`) is the
weakest: it is used only when all the others are absent.

| contract / evaluator | visual judge | final verdict | reason |
|---|---|---|---|
| pass | pass | pass | agreement |
| fail | fail | fail | agreement |
| contract and evaluator differ | any | uncertain | evaluator_disagreement |
| pass (or fail) | fail (or pass) | uncertain | judge_disagreement |
| both, agreeing | none | their verdict | agreement |
| one of them | none | its verdict, lower confidence | contract_only / evaluator_only |
| none | pass or fail | the judge's, lower confidence | judge_only |
| none | none | the evidence referee's, confidence at most 0.6 | evidence_only |
| none | none, the run was not read (most actions not understood, or most screenshots missing) | unknown | not_read |
| none | none (nor decisive evidence), no answer at the end, ``ends = answer`` | fail, confidence 0.6 | no_answer |
| none | none (nor decisive evidence), no answer at the end, ``ends = external`` | unknown | harness_may_stop |
| none | none (nor decisive evidence), no answer at the end, ``ends`` undeclared | unknown | ends_undeclared |
| none | none (and no decisive evidence) | unknown | no_verdict |
| uncertain (a check undecided) | none, nor anything else | uncertain, no false claim | contract_undecided |

A contract whose checks lack their evidence (no DOM snapshot, no frame) is ``uncertain`` and decides nothing:
the evaluator, the judge, the evidence referee and the no-answer rule decide as if it were absent, and when none
of them does, the run is ``uncertain`` (``contract_undecided``). Missing evidence is never a fail, and never an
accusation of a false claim.

The judge is one: the recorded judge and those of ``score --judgments`` vote (:func:`combine_judges`: the
majority decides, a tie decides nothing); the reference judge is kept beside them.
A run that was not read (``not_read``: most of its actions were not understood, or most of its steps have no
readable screenshot) gets no verdict from its own evidence nor from the no-answer rule: what the reader did not
understand cannot count for or against the agent, and a run whose answer could not be read cannot be said to
have none. It is ``unknown`` (``not_read``). The contract, the benchmark's evaluator and the judge still decide:
they check the final state itself (a DOM, a URL, the final screenshot, the benchmark's own result), not the
actions the reader failed to understand.

``verdict_source`` names the sources that decided (``contract+evaluator+judge``, ``evidence``,
``no_answer``, ``none``...). A run ended without an answer (no DONE, no answer, no infeasible report) is a
fail, as benchmarks count it, only when nothing stronger decides and its format declares that its harness ends
a run only by the agent's answer or a limit (``ends = answer``). Where the harness may stop a run itself (its
own state check passed, a person stopped it: ``ends = external``), or the format does not say, the end of the
run says nothing of its outcome: it is unknown, never guessed. An explicit give-up is an answer and stays
unknown unless other evidence decides it.

``false_claim``: the agent claimed success (:mod:`trajcheck.analyzers.claims` reads what it said) and
the final verdict is fail or uncertain. ``false_claim_basis`` is ``evaluator`` when the evaluator
alone decided, ``evidence`` when the evidence referee did, and ``referee`` otherwise.
``lesson_promotable``: only a pass, or a fail where a programmatic check failed and the judge did
not say pass; never on evidence alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base.box import Box
from ..base.reasons import VerdictReason as VR

from .contract import ContractResult, Picture
from .evidence import EvidenceVerdict

#: The reference judge's rubric defaults (pHash Hamming distances).
JUDGE_MAX_GLOBAL = 6
JUDGE_MAX_REGION = 4
REFERENCE_JUDGE = "reference-phash"
#: How much a verdict from a single source is trusted, relative to its own confidence.
SINGLE_SOURCE_FACTOR = 0.7
#: The most an evidence-only final verdict is trusted: it is the lowest authority of the three sources.
EVIDENCE_MAX_CONFIDENCE = 0.6
#: The confidence of a fail for a run that ended without an answer (verdict_source no_answer): benchmarks
#: count such a run as failed (OSWorld; WebArena's evaluator for a run cut off before its answer), as sure as
#: the strongest evidence-only verdict, and below every programmatic check and the judge.
NO_ANSWER_CONFIDENCE = 0.6
#: The evaluator score at or above which a run passes (the maximum; OSWorld gives partial credit, so
#: `score --evaluator-pass` lowers it).
EVALUATOR_PASS = 1.0


@dataclass(frozen=True)
class Judge:
    model: str
    verdict: str  # pass | fail
    score: float | None
    confidence: float | None
    reasons: tuple[str, ...]
    recorded: bool  # True: read from the run or a judgments file; False: computed offline
    source: str = ""  # recorded (outcome.judge), judgments (score --judgments), both joined by +, or reference


def reference_judge(final: Picture, refs: list[tuple[str, Picture]], regions: list[list[int]],
                    max_global: int = JUDGE_MAX_GLOBAL, max_region: int = JUDGE_MAX_REGION) -> Judge | None:
    """Compare the final frame with reference screenshots of the goal state.

    Rubric: against each reference, the whole-frame pHash distance must be at most
    ``max_global`` and the distance in every judge region at most ``max_region``;
    the best-matching reference decides. ``score`` is 1 - worst distance / 32
    (clipped to [0, 1]); ``confidence`` grows with the distance from the nearest
    limit (half a limit away or more: 0.9).

    A reference that cannot be compared (a judge region outside the frame, or a reference of another size)
    decides nothing: missing evidence is not a fail. With no comparable reference there is no judge (None).
    """
    best = None
    H, W = final.rgb.shape[:2]
    for path, ref in refs:
        if regions and (ref.rgb.shape[:2] != (H, W) or any(x + w > W or y + h > H for x, y, w, h in regions)):
            continue
        reasons = []
        gd = final.phash - ref.phash
        ok = gd <= max_global
        reasons.append(f"{path}: global distance {gd} (limit {max_global})")
        margins = [(max_global - gd) / max(1, max_global)]
        worst = gd
        for box in regions:
            rd = final.region_hash(Box.from_xywh(*box)) - ref.region_hash(Box.from_xywh(*box))
            ok = ok and rd <= max_region
            worst = max(worst, rd)
            margins.append((max_region - rd) / max(1, max_region))
            reasons.append(f"{path}: region {box} distance {rd} (limit {max_region})")
        key = (ok, -worst)
        if best is None or key > best[0]:
            best = (key, ok, worst, min(margins), reasons)
    if best is None:
        return None
    _, ok, worst, margin, reasons = best
    score = max(0.0, min(1.0, 1 - worst / 32))
    confidence = round(max(0.1, min(0.9, abs(margin) * 1.8)), 2)
    return Judge(REFERENCE_JUDGE, "pass" if ok else "fail", round(score, 3), confidence, tuple(reasons), False)


@dataclass(frozen=True)
class Verdict:
    det_verdict: str  # pass | fail | uncertain | not_applicable
    judge: Judge | None  # the visual judge of the final verdict
    other_judge: Judge | None  # a second judge, kept beside
    final: str  # pass | fail | uncertain | unknown
    reason: VR
    confidence: float
    claimed_success: bool
    false_claim: bool
    source: str  # the sources that decided, joined by +: contract, evaluator, judge; or evidence, or none
    false_claim_basis: str | None  # referee | evaluator | evidence, when false_claim
    lesson_promotable: bool
    lesson: str | None


#: A judge's confidence when it gives none, in combining several.
DEFAULT_JUDGE_CONFIDENCE = 0.5


def combine_judges(judges: list[Judge]) -> Judge | None:
    """Several judges of one run (the recorded one, and those of ``score --judgments``) as one visual judge: the
    majority's verdict, its confidence the majority's mean confidence times its share of the judges, its
    reasons each judge's verdict and reason. A tie between pass and fail is no judge (None): the judges decide
    nothing, and the other sources decide as if there were none. One judge is itself."""
    if len(judges) <= 1:
        return judges[0] if judges else None
    votes = {v: [j for j in judges if j.verdict == v] for v in ("pass", "fail")}
    if len(votes["pass"]) == len(votes["fail"]):
        return None
    verdict = "pass" if len(votes["pass"]) > len(votes["fail"]) else "fail"
    major = votes[verdict]
    share = len(major) / len(judges)
    conf = sum(DEFAULT_JUDGE_CONFIDENCE if j.confidence is None else j.confidence for j in major) / len(major)
    reasons = tuple(f"{j.model}: {j.verdict}" + (f" ({j.reasons[0]})" if j.reasons else "") for j in judges)
    sources = "+".join(dict.fromkeys(j.source for j in judges if j.source))
    return Judge("+".join(j.model for j in major), verdict, round(share, 3), round(conf * share, 3), reasons, True,
                 sources)


def choose_judges(recorded: Judge | None, reference: Judge | None) -> tuple[Judge | None, Judge | None]:
    """The recorded judge is the visual judge when both exist; the other is kept beside."""
    if recorded is not None:
        return recorded, reference
    return reference, None


def evaluator_verdict(score: float | None, pass_at: float = EVALUATOR_PASS) -> str | None:
    """The benchmark evaluator's verdict from its recorded score: pass at ``pass_at`` or above."""
    if score is None or score != score:  # NaN: no usable result
        return None
    return "pass" if score >= pass_at else "fail"


def decide(contract: ContractResult, judge: Judge | None, other: Judge | None, claimed_success: bool,
           evidence: EvidenceVerdict | None = None, evaluator: str | None = None, no_answer: bool = False,
           not_read: bool = False, ends: str | None = None) -> Verdict:
    """The final verdict from the sources present, strongest first (see the module docstring). ``no_answer``:
    the run ended without an answer (:func:`trajcheck.analyzers.claims.ended_without_answer`); ``not_read``: the
    reader understood too little of the run for its own evidence, or for the absence of an answer, to count;
    ``ends``: how the run's format declares its harness ends a run (``answer``, ``external``; None: it does not
    say). The absence of an answer fails a run only under ``answer``."""
    det = contract.verdict
    programmatic = [(n, v) for n, v in (("contract", det), ("evaluator", evaluator)) if v in ("pass", "fail")]
    jv = judge.verdict if judge else None
    jconf = judge.confidence if judge and judge.confidence is not None else 0.5
    names = [n for n, _ in programmatic] + (["judge"] if jv else [])
    source = "+".join(names) or "none"
    verdicts = {v for _, v in programmatic}
    p = next(iter(verdicts)) if len(verdicts) == 1 else None
    if len(verdicts) > 1:
        final, reason, conf = "uncertain", VR.EVALUATOR_DISAGREEMENT, 0.5
    elif p and jv:
        if p == jv:
            final, reason, conf = p, VR.AGREEMENT, max(0.9, jconf)
        else:
            final, reason, conf = "uncertain", VR.JUDGE_DISAGREEMENT, 0.5
    elif p:
        final, conf = p, (0.9 if len(programmatic) > 1 else 0.95 * SINGLE_SOURCE_FACTOR)
        only = VR.CONTRACT_ONLY if programmatic[0][0] == "contract" else VR.EVALUATOR_ONLY
        reason = VR.AGREEMENT if len(programmatic) > 1 else only
    elif jv:
        final, reason, conf = jv, VR.JUDGE_ONLY, jconf * SINGLE_SOURCE_FACTOR
    elif not_read:
        final, reason, conf = "unknown", VR.NOT_READ, 0.0
    elif evidence is not None and evidence.verdict in ("pass", "fail"):
        final, reason, conf = evidence.verdict, VR.EVIDENCE_ONLY, min(EVIDENCE_MAX_CONFIDENCE, evidence.confidence)
        source = "evidence"
    elif no_answer and ends == "answer":
        final, reason, conf, source = "fail", VR.NO_ANSWER, NO_ANSWER_CONFIDENCE, VR.NO_ANSWER.value
    elif det == "uncertain":
        final, reason, conf, source = "uncertain", VR.CONTRACT_UNDECIDED, 0.0, "contract"
    elif no_answer:  # the harness may have stopped the run itself, or nobody said: its end is no evidence
        final, reason, conf = "unknown", VR.HARNESS_MAY_STOP if ends == "external" else VR.ENDS_UNDECLARED, 0.0
    else:
        final, reason, conf = "unknown", VR.NO_VERDICT, 0.0
    # An uncertain verdict accuses a claim only when sources that decided disagree, never for missing evidence.
    false_claim = claimed_success and final in ("fail", "uncertain") and reason != VR.CONTRACT_UNDECIDED
    basis = None
    if false_claim:
        basis = source if source in ("evidence", "evaluator") else "referee"
    promotable = source != "evidence" and (final == "pass" or (final == "fail" and "fail" in verdicts and jv != "pass"))
    lesson = None
    if reason in (VR.JUDGE_DISAGREEMENT, VR.EVALUATOR_DISAGREEMENT):
        said = []
        if det in ("pass", "fail"):
            failed = "; ".join(f"{c.name}: {_short(c.evidence)}" for c in contract.failed) or "every check passed"
            said.append(f"contract {contract.name or '(unnamed)'} said {det} ({failed})")
        if evaluator:
            said.append(f"the benchmark's evaluator said {evaluator}")
        if jv:
            said.append(f"judge {judge.model if judge else '?'} said {jv}"
                        f"{' (' + '; '.join(judge.reasons[:2]) + ')' if judge and judge.reasons else ''}")
        lesson = (f"referee disagreement: {'; '.join(said)}. Do not promote; recheck the "
                  f"{'judge rubric' if p == 'fail' else 'contract checks'} against the final screenshot.")
    return Verdict(det, judge, other, final, reason, round(conf, 3), claimed_success, false_claim, source, basis,
                   promotable, lesson)


def _short(evidence: dict[str, Any]) -> str:
    keys = ("error", "undecided", "missing_required", "forbidden_active", "active_steps", "distance", "url", "matches",
            "found")
    parts = [f"{k}={evidence[k]}" for k in keys if k in evidence]
    return ", ".join(parts)[:200]
