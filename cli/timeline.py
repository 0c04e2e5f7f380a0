"""trajcheck timeline: one run, step by step, with its verdicts."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..base.errors import LedgerError
from ..base.reasons import WarningFollowup
from ..queries.failuremodes import failed_check, subkinds
from ..queries.views import action_label
from ..render.evidencetext import check_sentence, failure_sentence, process_sentence

from . import phasetext
from .common import Exit, cleaned, out, print_json
from .exits import ExitOutcome, exit_on_error
from .options import LedgerArg, TimelineFormat, TimelineFormatOpt


#: The lines `timeline --phases` may take: one screen of a 50-line terminal.
PHASES_HEIGHT = 50


def _state(s: dict[str, Any]) -> str:
    parts = []
    if s["url_before"] and s["url_after"]:
        parts.append(f"URL -> {s['url_after']}" if s["url_before"] != s["url_after"] else "URL unchanged")
    if s["effect_high_risk"]:
        v = {True: "effect seen", False: "NO EFFECT", None: "not checked"}[s["action_effect_observed"]]
        parts.append(f"{v} ({s['effect_reason']}; pHash global {s['effect_global_distance']}"
                     + (f", region {s['effect_region_distance']}" if s["effect_region_distance"] is not None else "")
                     + ")")
    if s["executor_ok"] is False or s["executor_error"]:
        parts.append(f"executor error: {s['executor_error'] or 'failed'}")
    if s.get("state_kind") == "return":  # a new screen is the usual case: only going back is said
        parts.insert(0, f"BACK to state {s['state_id']}, first seen at step {s['state_returns_to']}"
                     + (f" (oscillation {s['oscillation_id']})" if s.get("oscillation_id") is not None else ""))
    obs = [o for o in (s["obs_observations"] or []) if not o.startswith(("URL did not change", "Navigation occurred"))]
    parts += obs[:3]
    if s["loop_id"] is not None:
        parts.append(f"drift loop {s['loop_id']} ({s['loop_len']} steps)")
    if s["pred_prediction"]:
        parts.append(f"prediction {s['pred_prediction']}: "
                     + {True: "held", False: "FAILED", None: "unchecked"}[s["pred_held"]])
    return " | ".join(parts) or "-"


#: What followed a warning, in words, and its style.
_FOLLOWED: dict[str, tuple[str, str]] = {
    WarningFollowup.RECOVERED: ("recovered at step {n}", "green"),
    WarningFollowup.REPEATED: ("REPEATED at step {n}", "red"),
    WarningFollowup.MOVED_ON: ("moved on at step {n}", ""),
    WarningFollowup.DECLARED_DONE: ("declared done at step {n}", "red"),
    WarningFollowup.RUN_ENDED: ("run ended", ""),
}


def _followed(s: dict[str, Any]) -> Text:
    """The lane under a warning: what the agent did next, whether it saw the warning, whether it was false."""
    f = s.get("warning_followup")
    words, style = _FOLLOWED.get(f or "", ("no decision: step {n} has no frames", ""))
    t = Text(words.format(n=s.get("warning_followup_step")), style=style)
    seen = {True: "shown to the agent", False: "not shown to the agent", None: "shown: unknown"}[s.get("warning_shown")]
    t.append(f" | {seen}" + (f" ({s['warning_shown_source']})" if s.get("warning_shown_source") else ""))
    if s.get("effect_in_fact"):
        t.append(f" | FALSE WARNING: an effect after all ({s['effect_in_fact_basis']})", style="bold yellow")
    return t


def _lanes(rows: list[tuple[str, Text | str]]) -> Table:
    """Label and text side by side, so wrapped lines keep their indentation."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=9, no_wrap=True)
    grid.add_column(overflow="fold")
    for label, body in rows:  # a plain string is text from the run too: never read as markup
        grid.add_row(Text(label, style="dim"), Text(body) if isinstance(body, str) else body)
    return grid


def render(data: dict[str, Any]) -> Group:
    """The timeline: lanes action -> state -> hint (and what followed it) -> reward per step, then the referee.
    Every string of ``data`` came from a run: shown as written, with its control codes made visible."""
    data = cleaned(data)
    r = data["run"]
    parts: list[Any] = []
    head = Text(f"run {r['run_id']}", style="bold")
    steps = "-" if r["n_steps"] is None else r["n_steps"]  # a run not read (no_log) has no count
    head.append(f"  task {r['task_id'] or '-'}  outcome {r['outcome_status'] or '-'}  {steps} steps", style="")
    parts.append(head)
    if r["goal"]:
        parts.append(Text(f"goal: {r['goal']}", style="dim"))
    if r.get("actions_after_last_frame"):  # the final state those actions led to: no frame shows it
        n = r["actions_after_last_frame"]
        parts.append(Text(f"{n} action{'s' * (n != 1)} after the last screenshot: the final state was not seen",
                          style="yellow"))
    for s in data["steps"]:
        rows: list[tuple[str, Text | str]] = [(f"step {s['step_index']}", Text(action_label(s), style="cyan"))]
        if s["reasoning"]:
            reason = " ".join(s["reasoning"].split())
            rows.append(("why", Text(reason[:200] + ("..." if len(reason) > 200 else ""), style="dim")))
        rows.append(("state", _state(s)))
        if s["effect_feedback"]:
            rows.append(("hint", Text(s["effect_feedback"], style="yellow")))
            rows.append(("then", _followed(s)))
        if s.get("screen_text") is not None:
            rows.append(("screen", _screen(s)))
        style = {"strong_positive": "green", "weak_positive": "green", "negative": "red",
                 "hard_negative": "bold red"}.get(s["reward_class"] or "", "")
        if s["step_index"] == r.get("decisive_step"):  # where the run was lost (docs/failures.md)
            rows.append(("DECISIVE", Text(f"{r['decisive_kind']}: {r.get('decisive_evidence') or ''}".rstrip(": "),
                                          style="bold red")))
        rows.append(("reward", Text(f"{s['reward_score']:+.2f} {s['reward_class']}  "
                                    f"{', '.join(s['reward_reasons'] or [])} (confidence {s['reward_confidence']:.2f})",
                                    style=style)))
        parts += [Text(""), _lanes(rows)]
    checks = r.get("contract_checks") or []
    failed = [c for c in checks if not c["passed"]]
    detail = "; ".join(f"{c['name']}: {check_sentence(c)}" for c in failed) if failed else \
        (f"{len(checks)} check{'s' if len(checks) != 1 else ''} passed" if checks else "")
    rows = [("contract", f"{r['det_verdict']}  {r['contract_name'] or ''}  {detail}".rstrip())]
    if r.get("contract_tree"):
        rows.append(("rubric", rubric_text(r["contract_tree"], r.get("contract_score"))))
    if r.get("judgments"):
        rows.append(("judges", Text("\n".join(f"{j['judge']}: {j['verdict']}"
                                              + (f" (confidence {j['confidence']:g})" if j["confidence"] is not None
                                                 else "") + (f"  {j['reason'][:200]}" if j["reason"] else "")
                                              for j in r["judgments"]))))
    rows.append(("judge", f"{r['judge_verdict']}  {r['judge_model']} ({r['judge_source']})  score {r['judge_score']}"
                          f"  confidence {r['judge_confidence']}" if r["judge_model"] else "none"))
    if r.get("states_returning") or r.get("stalled_from_step") is not None:  # said only when the run went back
        stalled = (f"; stalled from step {r['stalled_from_step']}" if r.get("stalled_from_step") is not None else "")
        rows.append(("progress", Text(f"{r['states_distinct']} screens, {100 * (r['states_returning'] or 0):.0f}% of "
                                      f"steps going back, {r['oscillations']} oscillation"
                                      f"{'s' * (r['oscillations'] != 1)}{stalled}"
                                      + ("  NO NET PROGRESS" if r.get("no_net_progress") else ""),
                                      style="bold red" if r.get("no_net_progress") else "")))
    if r.get("screen_text_final") is not None:
        said = "; ".join(r.get("screen_messages_final") or []) or "no message"
        rows.append(("screen", Text(f"final frame, since the last high-risk action: {said}", style="dim")))
    if r.get("evidence_verdict"):
        rows.append(("evidence", f"{r['evidence_verdict']}  confidence {r['evidence_confidence']}  "
                                 f"{'; '.join(r['evidence_reasons'] or []) or 'nothing decisive'}"))
    final = (r["eval_final_verdict"] or "unknown").upper()
    ft = Text(final, style={"PASS": "bold green", "FAIL": "bold red", "UNCERTAIN": "bold yellow"}.get(final, "bold"))
    ft.append(f"  {r['verdict_reason']}  (from {r.get('verdict_source') or 'none'})")
    if r["false_claim"]:
        ft.append(f"  FALSE CLAIM: the agent declared success ({r.get('false_claim_basis') or 'referee'})",
                  style="bold red")
    rows.append(("final", ft))
    if r.get("process_evidence"):  # how the run went about it, beside the outcome (docs/failures.md)
        rows.append(("process", process_sentence(r.get("process_score"), r["process_evidence"])))
    rows += _where_lost(r, checks)
    parts += [Text(""), Text("referee", style="bold"), _lanes(rows)]
    return Group(*parts)


def _where_lost(r: dict[str, Any], checks: list[dict[str, Any]]) -> list[tuple[str, Text | str]]:
    """The referee's rows on where a run that did not pass went wrong: its failure mode, its first decisive error
    (each with whether the agent could have avoided it), the lesson drawn (docs/failures.md), and damage that is
    not the agent's doing."""
    rows: list[tuple[str, Text | str]] = []
    if r.get("failure_mode"):
        at = f" at step {r['failure_step']}" if r.get("failure_step") is not None else ""
        kinds = subkinds(r)
        detail = f" ({'; '.join(kinds)})" if kinds else ""
        said = failure_sentence(r.get("failure_evidence"), failed_check(r.get("failure_evidence"), checks))
        control = f" [{r['failure_control']}]" if r.get("failure_control") else ""
        rows.append(("failure", Text(f"{r['failure_mode']}{detail}{at}{control}: {said}".rstrip(": "), style="red")))
    if r.get("decisive_kind"):
        at = f" at step {r['decisive_step']}" if r.get("decisive_step") is not None else ""
        control = f" [{r['decisive_control']}]" if r.get("decisive_control") else ""
        rows.append(("decisive", Text(f"{r['decisive_kind']}{at}{control}: {r.get('decisive_evidence') or ''}"
                                      .rstrip(": "), style="red")))
    if r["lesson_candidate"]:
        rows.append(("lesson", Text(r["lesson_candidate"], style="dim")))
    if r.get("damage"):  # not the agent's doing: said beside the verdict, which it does not change (docs/analysis.md)
        rows.append(("damage", Text(f"{r['damage']}: {r.get('damage_evidence') or ''}".rstrip(": ")
                                    + " (the verdict is kept; trajcheck redo lists the run)", style="yellow")))
    return rows


#: Control characters (terminal escapes among them) in a name from a contract file: shown as U+FFFD.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def rubric_text(tree: dict[str, Any], score: float | None) -> Text:
    """A rubric contract's tree, a node a line, indented by depth: kind, name, result, weight, critical."""
    style = {"pass": "green", "fail": "red", "undecided": "yellow"}
    out = Text(f"{tree['result']}, score {'-' if score is None else format(score, '.2f')}")

    def line(node: dict[str, Any], depth: int) -> None:
        out.append("\n" + "  " * depth + f"{node['kind']} {_CONTROL.sub(chr(0xFFFD), str(node['name']))}: ")
        out.append(node["result"], style=style.get(node["result"], ""))
        extra = ([f"weight {node['weight']:g}"] if node["weight"] != 1 else []) + \
            (["CRITICAL"] if node["critical"] else [])
        if node["kind"] != "check" and node["score"] is not None:
            extra.append(f"score {node['score']:.2f}")
        if extra:
            out.append("  " + ", ".join(extra), style="dim")
        for child in node.get("children") or []:
            line(child, depth + 1)

    line(tree, 1)
    return out


def _screen(s: dict[str, Any]) -> Text:
    """What OCR read of a step's change: each new line at its box, then the messages among them."""
    boxes = dict(zip(s["screen_text"] or [], s.get("screen_text_boxes") or []))
    new = s.get("screen_text_new") or []
    if not new:
        return Text("read on screen: nothing new", style="dim")
    out = Text("")
    for i, line in enumerate(new[:6]):
        box = boxes.get(line)
        out.append(("\n" if i else "") + (f"[{', '.join(map(str, box))}] " if box else ""), style="dim")
        out.append(_short(line, 80))
    if len(new) > 6:
        out.append(f"\n... {len(new) - 6} more lines", style="dim")
    for m in s.get("screen_messages") or []:
        out.append(f"\n-> {m}", style="red" if m.startswith("error") else "green")
    if s.get("screen_text_agrees") is False:
        out.append("\nthe DOM says otherwise (the DOM decides)", style="yellow")
    return out


def _short(v: Any, limit: int = 60) -> str:
    text = repr(v) if isinstance(v, str) else str(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@exit_on_error(ExitOutcome(Exit.USAGE, "no such run"), raises=(LedgerError,))
def timeline(
    ledger_dir: LedgerArg,
    run_id: Annotated[str, typer.Argument(help="The run to show.")],
    fmt: TimelineFormatOpt = TimelineFormat.text,
    phases: Annotated[bool, typer.Option(
        "--phases", help="The progress timeline instead, on one screen however long the run: phases where the "
                         "page, title or screen changes, the screens reached, where progress last advanced, and "
                         "the step each contract node first held.")] = False,
) -> None:
    """Show one run step by step: action, state, hint, reward, then the referee's verdicts.

    Example: trajcheck timeline ledger/ consent-overlay__verifier-off

    Example: trajcheck timeline ledger/ paged-results-progress --phases
    """
    from .. import commands  # DuckDB loads when the command runs

    if phases:
        from ..queries.phases import phases as progress

        found = progress(ledger_dir, run_id)
        if fmt is TimelineFormat.json:
            print_json(commands.plain(found))
            return
        out.print(phasetext.render(found.to_json(), width=out.width, height=PHASES_HEIGHT), soft_wrap=False,
                  crop=True)
        return
    data = commands.timeline(ledger_dir, run_id)
    if fmt is TimelineFormat.json:
        print_json(data)
        return
    out.print(render(data), soft_wrap=False)  # lines wrap between words at the terminal's width
