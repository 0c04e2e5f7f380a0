"""The analysis rules that used to live inside the scoring pipeline, tested as the pure functions they are:
the reward look-back, the reference-answer match, the run's claim, a step's prediction, the ambient
transition of a step."""

from __future__ import annotations

from trajcheck.analyzers import ambient, answers, claims, lookback, predictions
from trajcheck.analyzers.contract import ContractResult
from trajcheck.analyzers.loops import LoopFinding
from trajcheck.analyzers.observation import PageEvidence, verify
from trajcheck.analyzers.page import PageFacts
from trajcheck.analyzers.perceptual import EffectFinding, ImageEvidence
from trajcheck.analyzers.pixeldiff import no_change
from trajcheck.base.hashing import Hash64
from trajcheck.schemas.records import Action, Client, Page, Run, Semantic, Step

NO_LOOP = LoopFinding(None, None, None)
NO_PRED = predictions.PredictionFinding(None, None, (), 0, None, "generic")
EFFECT = EffectFinding(None, "not_high_risk", None, "not_high_risk", None, None, (), None, None)


def _run(*steps: Step, **kw) -> Run:
    return Run(run_id="r", path="r", source_format="trajcheck.run/1", steps=steps, **kw)


def _facts(dom_after: str | None = None) -> PageFacts:
    return PageFacts(verify(PageEvidence()), dom_after_hash=dom_after)


def _rewards(run: Run, hashes: list[tuple[int | None, int | None]], doms: list[str | None] | None = None,
             contracts: dict | None = None) -> list:
    n = len(run.steps)
    ev = [ImageEvidence(pre_hash=Hash64(a) if a is not None else None, post_hash=Hash64(b) if b is not None else None)
          for a, b in hashes]
    pages = [_facts(d) for d in (doms or [None] * n)]
    return lookback.score_steps(run, ev, [EFFECT] * n, pages, [NO_PRED] * n, [NO_LOOP] * n, [False] * n, 10,
                                contracts or {})


def test_new_information_is_a_screen_not_seen_before_in_the_run() -> None:
    read = Step(1, Action("READ"))
    again = Step(2, Action("READ"))
    # step 1 shows a new screen; step 2 comes back to step 1's pre screen (distance 0): nothing new
    rw = _rewards(_run(read, again), [(0x0, 0xFFFF_FFFF), (0xFFFF_FFFF, 0x0)])
    assert any(r.startswith("new_information") for r in rw[0].reasons)
    assert not any(r.startswith("new_information") for r in rw[1].reasons)


def test_a_reread_after_a_stale_reference_is_judged_against_the_observation_it_relied_on() -> None:
    look = Step(1, Action("READ"))
    click = Step(2, Action("CLICK", x=5, y=5), executor_ok=False, executor_error="element is not attached to the DOM")
    reread = Step(3, Action("READ"))
    # the re-read's screen was seen before (step 1's pre) but differs from the observation step 1 made
    rw = _rewards(_run(look, click, reread), [(0x0, 0xFFFF), (0xFFFF, 0xFFFF), (0xFFFF, 0x0)])
    assert any(r.startswith("fresh_read_after_failure") for r in rw[2].reasons), rw[2].reasons


def test_the_same_action_failing_again_is_a_repeated_failed_action() -> None:
    s1 = Step(1, Action("CLICK", x=100, y=100), executor_ok=False, executor_error="Timeout 5000ms exceeded")
    s2 = Step(2, Action("CLICK", x=108, y=95), executor_ok=False, executor_error="Timeout 5000ms exceeded")
    s3 = Step(3, Action("CLICK", x=300, y=100), executor_ok=False, executor_error="Timeout 5000ms exceeded")
    rw = _rewards(_run(s1, s2, s3), [(None, None)] * 3)
    assert not any(r.startswith("repeated_failed_action") for r in rw[0].reasons)
    assert any(r.startswith("repeated_failed_action") for r in rw[1].reasons)  # within 16 px: the same target
    assert not any(r.startswith("repeated_failed_action") for r in rw[2].reasons)


def test_the_run_contract_applies_at_its_step_and_a_recorded_one_wins() -> None:
    s1 = Step(1, Action("CLICK", x=1, y=1))
    s2 = Step(2, Action("DONE"), contract_name="own", contract_passed=False)
    passed = ContractResult("pass", "run-contract")
    rw = _rewards(_run(s1, s2), [(None, None)] * 2, contracts={1: passed, 2: passed})
    assert any("run-contract" in r for r in rw[0].reasons), rw[0].reasons
    assert any("own" in r for r in rw[1].reasons) and not any("run-contract" in r for r in rw[1].reasons)


def test_answer_matches_ignores_case_and_spacing() -> None:
    run = _run(Step(1, Action("DONE", text="The  answer is PARIS.")), reference_answers=("paris",))
    assert answers.answer_matches(run, run.steps[0]) is True
    assert answers.answer_matches(run, Step(2, Action("DONE", text="Lyon"))) is False
    assert answers.answer_matches(run, Step(3, Action("DONE"), extra={"extracted_content": "paris, France"})) is True
    assert answers.answer_matches(run, Step(4, Action("DONE"))) is None  # no answer
    assert answers.answer_matches(_run(run.steps[0]), run.steps[0]) is None  # no reference


def test_claim_of_reads_the_last_done() -> None:
    ok = Step(2, Action("DONE", text="Order placed."))
    gave_up = Step(3, Action("DONE", text="I could not find the order form."))
    assert claims.claim_of(_run(Step(1, Action("CLICK", x=1, y=1)), ok)).reason == "done"
    assert claims.claim_of(_run(ok, gave_up)).reason == "message_admits_failure"
    flagged = Step(2, Action("DONE", extra={"infeasible": True}))
    assert claims.claim_of(_run(flagged)).reason == "agent_reported_failure"
    said = Step(2, Action("DONE"), semantic=Semantic(task_completed=True))
    assert claims.claim_of(_run(said)).reason == "agent_reported_success"
    assert claims.claim_of(_run(Step(1, Action("CLICK", x=1, y=1)), outcome_status="done")).reason == "outcome_done"
    assert claims.claim_of(_run(Step(1, Action("CLICK", x=1, y=1)))).claimed is False


def test_step_prediction() -> None:
    held = predictions.step_prediction("frame_changed", None, True, (), (), None, "generic")
    assert (held.prediction, held.held, held.failed_checks, held.checks) == ("frame_changed", True, (), 1)
    broke = predictions.step_prediction("frame_stable", None, True, (), (), None, "generic")
    assert (broke.held, broke.failed_checks) == (False, ("frame_stable",))
    unknown = predictions.step_prediction("frame_changed", None, None, (), (), None, "generic")
    assert (unknown.held, unknown.checks) == (None, 0)
    exp = predictions.step_prediction(None, {"element_should_exist": "#toast"}, None, ("a", "b"), ("b",), None,
                                      "generic")
    assert (exp.prediction, exp.held, exp.failed_checks, exp.checks) == ("expected", False, ("b",), 2)
    assert exp.confidence is not None and exp.confidence <= predictions.MISSING_ELEMENT_CAP
    none = predictions.step_prediction(None, None, True, (), (), None, "navigation")
    assert (none.prediction, none.held, none.action_kind) == (None, None, "navigation")


def test_transition_of_a_step() -> None:
    change = no_change(100, 100, None)
    ev = ImageEvidence(change=change, region=(0, 0, 10, 10))
    page = Page(url_before="https://a.test/x", url_after="https://a.test/x", focus_before="#q", focus_after="#q")
    quiet = Client(did_network_occur=False, did_dom_mutate=False, did_url_change=False)
    click = Step(1, Action("CLICK", x=5, y=5), frame_pre="1.png", frame_post="2.png", page=page, client=quiet)
    t = ambient.transition_of(click, ev)
    assert t is not None and (t.idle, t.quiet, t.focus_kept, t.page, t.region) == \
        (False, True, True, "https://a.test/x", (0, 0, 10, 10))
    wait = Step(2, Action("WAIT"), frame_pre="2.png", frame_post="3.png")
    assert ambient.transition_of(wait, ev).idle is True  # type: ignore[union-attr]
    moved = Step(3, Action("CLICK", x=5, y=5), frame_pre="3.png", frame_post="4.png",
                 page=Page(url_before="https://a.test/x", url_after="https://a.test/y"))
    assert ambient.transition_of(moved, ev) is None  # two pages: nothing ambient to learn
    assert ambient.transition_of(Step(4, Action("WAIT"), frame_pre="5.png", frame_post="5.png"), ev) is None
    assert ambient.transition_of(wait, ImageEvidence()) is None  # no frames


def test_grid_baseline_median_is_numpys():
    """The grid check's baseline colour is np.median over the cells, computed without numpy.ma."""
    import numpy as np

    from trajcheck.analyzers.contract import _median_of_rows

    rng = np.random.default_rng(5)
    for n in range(1, 40):
        cells = rng.random((n, 3)) * 255
        if n % 3 == 0:
            cells = np.round(cells)  # ties between the middle values
        assert np.array_equal(_median_of_rows(cells), np.median(cells, axis=0))
