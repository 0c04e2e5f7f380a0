"""What the agent claimed (issue 12): its final DONE read for what it says."""

from __future__ import annotations

import pytest

from trajcheck.analyzers.claims import CLAIM_RULES, admission, read_claim


@pytest.mark.parametrize("message", [
    "I could not finish the task: the site asks me to sign in.",
    "unable to proceed, a verification page blocks the form",
    "I was not able to place the order.",
    "We couldn't complete the booking because the dates are sold out.",
    "The chart has no data to display, making it impossible to determine the maximum.",
    "The task is infeasible: the product does not exist.",
    "The \"Order Now\" button is disabled, preventing the order from being placed.",
    "The portal requires me to log in before it shows the orders.",
    "I gave up after three attempts.",
    "I won't make a purchase with this card.",
])
def test_a_message_that_admits_failure_is_no_claim(message):
    assert admission(message) is not None
    c = read_claim(True, "done", message=message)
    assert (c.claimed, c.reason) == (False, "message_admits_failure")
    assert c.evidence == admission(message)


@pytest.mark.parametrize("message", [
    "The account was created.",
    "Order placed: TH-20931.",
    "The store cannot deliver on Sundays.",  # a fact in the answer, not the agent's failure
    "The customer with phone number 2065555555 is Adam Garcia.",
    "I couldn't find any errors; the form was submitted.",  # a check that passed
    "NW-1207",
])
def test_an_answer_or_a_report_of_success_is_a_claim(message):
    assert admission(message) is None
    assert read_claim(True, "done", message=message) == read_claim(True, None, message=message)
    assert read_claim(True, None, message=message).claimed is True


def test_recorded_flags_come_before_the_words():
    # the harness's failure flag (browser-use success false, report_infeasible, OSWorld FAIL)
    c = read_claim(True, "done", flag_failed=True, message="The order was placed.")
    assert (c.claimed, c.reason, c.evidence) == (False, "agent_reported_failure", "infeasible")
    c = read_claim(True, "done", task_completed=False, message="Done.")
    assert (c.claimed, c.reason) == (False, "agent_reported_failure")
    c = read_claim(True, "done", task_completed=True, message="I could not do it")
    assert (c.claimed, c.reason) == (True, "agent_reported_success")


def test_no_done_and_outcome_status():
    assert read_claim(False, None) == read_claim(False, "max_steps")
    assert (read_claim(False, None).claimed, read_claim(False, None).reason) == (False, "no_done")
    c = read_claim(False, "done")
    assert (c.claimed, c.reason) == (True, "outcome_done")


def test_every_reason_is_in_the_rule_table():
    codes = [c for c, _, _ in CLAIM_RULES]
    seen = {read_claim(False, None).reason, read_claim(False, "done").reason,
            read_claim(True, None, flag_failed=True).reason, read_claim(True, None, task_completed=True).reason,
            read_claim(True, None, message="I could not").reason, read_claim(True, None, message="ok").reason}
    assert seen == set(codes)
    assert all(claimed == read_claim(**_args(c)).claimed for c, claimed, _ in CLAIM_RULES)


def _args(code: str) -> dict:
    return {"no_done": {"has_done": False, "outcome_status": None},
            "outcome_done": {"has_done": False, "outcome_status": "done"},
            "agent_reported_failure": {"has_done": True, "outcome_status": None, "flag_failed": True},
            "agent_reported_success": {"has_done": True, "outcome_status": None, "task_completed": True},
            "message_admits_failure": {"has_done": True, "outcome_status": None, "message": "unable to proceed"},
            "done": {"has_done": True, "outcome_status": None, "message": "Done."}}[code]


def test_a_huge_message_is_read_in_bounded_time():
    c = read_claim(True, "done", message="x " * 2_000_000 + "I could not finish")
    assert (c.claimed, c.reason) == (False, "message_admits_failure")  # its start and end are read
    c = read_claim(True, "done", message="x " * 2_000 + "I could not finish" + " x" * 2_000_000)
    assert c.claimed is True  # the middle of a 4 MB message is not
