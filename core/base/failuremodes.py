"""The failure modes: why a run that did not pass failed, one decisive cause per run (``runs.failure_mode``).

Declared here, apart from :mod:`trajcheck.base.reasons` (whose ``SECTIONS`` lists this catalogue as the
"Failure modes" section of docs/reasons.md), in the order of their precedence: the first mode whose
evidence a run shows is its mode (:mod:`trajcheck.analyzers.failuremodes` applies it; docs/failures.md).
"""

from __future__ import annotations

from enum import StrEnum


class FailureMode(StrEnum):
    """The decisive cause of a run that did not pass (``failure_mode``), in precedence order."""

    BLOCKED = "blocked"
    APP_SAID_NO = "app_said_no"
    DEAD_ACTION = "dead_action"
    LOOPED = "looped"
    NO_ANSWER = "no_answer"
    GAVE_UP = "gave_up"
    WRONG_RESULT = "wrong_result"
    NOT_DETERMINED = "not_determined"


#: What each mode means and what its ``failure_detail`` holds.
MEANINGS: dict[str, str] = {
    FailureMode.BLOCKED: "the run ends on a blocking page: a CAPTCHA, an access-denied page, or the sign-in wall an "
                         "auth redirect led to (evidence referee ends_blocked), or a dead action (below) under a modal "
                         "overlay; detail `captcha`, `auth_wall`, `blocking_page` or `overlay`",
    FailureMode.APP_SAID_NO: "the application answered the last high-risk action with an error or validation "
                             "message that was not on the page before it (error_after_last_high_risk); detail the "
                             "error text, normalised (case, spacing, end punctuation, a framework's 'N errors "
                             "prohibited' header)",
    FailureMode.DEAD_ACTION: "the decisive action had no effect: the last high-risk action had no observed effect and "
                           "nothing after it changed the screen or the URL (last_high_risk_no_effect); detail the "
                           "action type",
    FailureMode.LOOPED: "the run ends repeating an action on an unchanging screen, back on a screen it reached early "
                        "with nothing kept since, or declaring DONE after waits that changed nothing (ends_in_loop, "
                        "no_net_progress, done_after_idle_waits); detail `drift_loop`, `no_net_progress` or "
                        "`idle_waits`",
    FailureMode.NO_ANSWER: "the run ended without an answer: no DONE, no answer, no infeasible report (an executor "
                           "error, the step budget, a crash, a cut-off log); detail `executor_error` or `cut_off`",
    FailureMode.GAVE_UP: "the agent ended the run saying it failed (a failure flag, FAIL, or a final message that "
                         "admits it), and no evidence above shows why; detail the admission's kind",
    FailureMode.WRONG_RESULT: "the run finished, and a check of its result failed: a contract check, the benchmark's "
                              "evaluator, the judge, or the answer against the reference; detail the failed check's "
                              "type, `evaluator`, `judge` or `answer` (an undecided check is not a failure)",
    FailureMode.NOT_DETERMINED: "the run did not pass and no evidence above shows why (missing evidence is not a "
                                "cause); detail the final verdict's reason",
}


class DecisiveKind(StrEnum):
    """The first decisive error of a run that did not pass (``runs.decisive_kind``): the step after which its evidence
    shows it could no longer succeed (analyzers/decisive.py; docs/failures.md)."""

    BLOCKED = "blocked"
    IGNORED_MESSAGE = "ignored_message"
    DEAD_ACTION = "dead_action"
    LOOP_START = "loop_start"
    CONTRACT_CHECK = "contract_check"
    STALL = "stall"
    NOT_DETERMINED = "not_determined"


#: What each decisive error kind means, and the step ``runs.decisive_step`` names.
DECISIVE_MEANINGS: dict[str, str] = {
    DecisiveKind.BLOCKED: "the run ends on a CAPTCHA, an access-denied page or a sign-in wall (failure mode blocked): "
                          "the step that led onto it, from which the run never left it",
    DecisiveKind.IGNORED_MESSAGE: "an error message of the application appeared after the step (not on the page "
                                  "before it), and no later acting step changed the screen or the URL: the agent did "
                                  "not act on it",
    DecisiveKind.DEAD_ACTION: "a high-risk action with no observed effect that nothing recovered: no later high-risk "
                              "action had an effect (nor an undecided one), no later step reached a new screen",
    DecisiveKind.LOOP_START: "the first return to a screen the run had left, when the run ends on a screen it had "
                             "already left, with at least two returns and no high-risk effect since; or the first "
                             "step of a drift loop the run ends in",
    DecisiveKind.CONTRACT_CHECK: "a contract check failed, and its evidence names the step that put the wrong value "
                                 "there: the last click on a grid cell the check forbids, the step that led to the "
                                 "wrong page the run stayed on, or the last step that typed or selected the wrong "
                                 "value the check found; only with a contract (a missing value names no step)",
    DecisiveKind.STALL: "the step where progress last advanced (a new screen, a high-risk effect), when at least two "
                        "acting steps follow it to the end of the run and none reaches a new screen",
    DecisiveKind.NOT_DETERMINED: "the run did not pass and no step shows where it was lost (a wrong result no "
                                 "contract check links to a step, missing frames); runs.decisive_step is null",
}


class Control(StrEnum):
    """Could the agent have avoided a failure mode or a decisive error (``runs.failure_control``,
    ``runs.decisive_control``)? Null where the evidence does not say (not_determined, a sign-in wall of a task whose
    goal is not recorded)."""

    CONTROLLABLE = "controllable"
    UNCONTROLLABLE = "uncontrollable"


#: What each control value means.
CONTROL_MEANINGS: dict[str, str] = {
    Control.CONTROLLABLE: "the agent chose it: a dead action, a loop, a stall, an error message it did not act on, an "
                          "overlay it could have dismissed, a sign-in wall the goal gave credentials for, giving up, "
                          "no answer, a wrong result",
    Control.UNCONTROLLABLE: "not the agent's doing: a CAPTCHA, an access-denied or rate-limit page, an error message "
                            "that says the server failed, the site is down or the item is out of stock, a sign-in "
                            "wall the goal gave no credentials for, a damaged run (infrastructure, failed reset, "
                            "killed harness, parse artifact)",
}


class Damage(StrEnum):
    """Why a run's failure or success is not the agent's doing (``runs.damage``), in the order tried. A damaged run
    keeps its verdict: the damage is reported beside it (analyzers/damage.py; docs/analysis.md)."""

    INFRASTRUCTURE = "infrastructure"
    RESET_FAILED = "reset_failed"
    HARNESS_KILLED = "harness_killed"
    PARSE_ARTIFACT = "parse_artifact"
    PRE_SATISFIED = "pre_satisfied"
    NO_LOG = "no_log"


#: What each damage kind means (its evidence in ``runs.damage_evidence``).
DAMAGE_MEANINGS: dict[str, str] = {
    Damage.INFRASTRUCTURE: "an API quota, rate-limit, authentication, 5xx, request-timeout or connection error of the "
                           "model or environment ends the run: the last step's error, or the run's own error",
    Damage.RESET_FAILED: "the log says the environment's reset failed (any step's error, or the run's own), or the "
                         "first frame is more than 8 pHash bits from the start at least 2 other repeats of the task "
                         "(same task and config) agree on, and they are most of the group",
    Damage.HARNESS_KILLED: "the harness or its control channel died mid-run: the log ends in a closed browser, "
                           "session or connection; an action of the agent killed a process (pkill, killall, kill "
                           "-9...) and the run ended there; or the last action is pending (no result, no later frame) "
                           "and the run's status says it ended abnormally (error, aborted, killed, crashed)",
    Damage.PARSE_ARTIFACT: "the run ended on a FAIL or DONE whose marker stands in the model's reasoning beside a "
                           "pending tool call: the parser read the marker, not the call",
    Damage.PRE_SATISFIED: "the run passed with no effective action: no step acted, or its screen never left the "
                          "start state (one screen state) and no action had an observed effect",
    Damage.NO_LOG: "a run folder with screenshots and no log any reader claims (beside the batch's runs): a run row "
                   "with no verdict, never read",
}
