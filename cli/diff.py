"""trajcheck diff: two runs of one task side by side, and the first step where they went different ways."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer
from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..base.errors import LedgerError
from ..base.reasons import PairMatch
from ..queries.tables import flat_rows
from ..queries.views import action_label

from .common import Exit, cleaned, emit, out, print_json
from .exits import ExitOutcome, exit_on_error
from .options import ByOpt, Format, FormatOpt, LedgerArg

#: How a pair's match reads in the middle column (a member is its text: the JSON's value finds it).
_MARKS = {PairMatch.SAME: "=", PairMatch.DIFFERENT_SCREEN: "≠ screen", PairMatch.DIFFERENT_ACTION: "≠ action",
          PairMatch.DIFFERENT_TARGET: "≠ target", PairMatch.DIFFERENT_RESULT: "≠ result",
          PairMatch.EXTRA_STEP: "+ step", PairMatch.RUN_ENDED: "ended"}


def _state(s: dict[str, Any]) -> str:
    """The step's screen and what the verifier saw: 'state 1 new · effect seen (content_changed_in_region)'."""
    state = "no frame" if s["state_id"] is None else f"state {s['state_id']} {s['state_kind']}"
    effect = {True: "effect seen", False: "NO EFFECT", None: ""}[s["effect_observed"]]
    return state + (f" · {effect} ({s['effect_reason']})" if effect else "")


def _cell(s: dict[str, Any] | None, ended: bool) -> Text:
    if s is None:
        return Text("(ended)" if ended else "(no such step)", style="dim")
    t = Text(f"{s['step_index']} ", style="bold")
    t.append(action_label(s), style="cyan")
    t.append("\n" + _state(s), style="dim")
    # the WARNING line repeats the effect reason: said in a word, with whether the agent saw it (the full
    # texts are in --format json and csv)
    if s["hint"]:
        t.append("\nWARNING hint · " + ("shown to the agent" if s["shown"] == s["hint"] else
                                        f"the agent saw: {s['shown']}" if s["shown"] else "none recorded as shown"),
                 style="yellow")
    elif s["shown"]:
        t.append(f"\nthe agent saw: {s['shown']}", style="yellow")
    return t


def _side(label: str, r: dict[str, Any], by: str | None) -> Text:
    t = Text(f"{label}: ", style="bold")
    t.append(r["run_id"], style="bold")
    if r["arm"] is not None:
        t.append(f"  ({by} = {r['arm']})")
    t.append(f"  {r['verdict'] or 'unknown'}, {r['n_steps']} steps"
             + (", claimed success" if r["claimed_success"] else ""))
    if r["false_claim"]:
        t.append("  FALSE CLAIM", style="bold red")
    if r["picked"]:
        t.append(f"\n   picked: {r['picked']}", style="dim")
    return t


def render(data: dict[str, Any]) -> Group:
    """The header (both runs), the aligned steps side by side with the first divergence marked, and why.
    Every string of ``data`` came from the runs: shown as written (Text, never markup), control codes visible."""
    data = cleaned(data)
    first = data["first_divergence"]
    at = first["pair"] if first else None
    table = Table(show_lines=True, header_style="bold", expand=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("A", overflow="fold", ratio=1)  # the run ids are whole in the lines above
    table.add_column("match", no_wrap=True)
    table.add_column("B", overflow="fold", ratio=1)
    for p in data["pairs"]:
        here = p["pair"] == at
        mark = Text(_MARKS.get(p["match"], p["match"]), style="bold red" if here else
                    ("green" if p["match"] == PairMatch.SAME else "yellow"))
        if here:
            mark.append("\n◀ first", style="bold red")
        ended = p["match"] == PairMatch.RUN_ENDED
        table.add_row(str(p["pair"]), _cell(p["a"], ended), mark, _cell(p["b"], ended),
                      style="on grey15" if here else None)
    if first:
        steps = [("-" if first[k] is None else first[k]) for k in ("step_a", "step_b")]
        verdict = Text(f"first divergence at pair {first['pair']} (A step {steps[0]}, B step {steps[1]}): "
                       f"{first['reason']}", style="bold red")
        verdict.append(f"\n{first['why']}", style="")
    else:
        verdict = Text("no divergence: the runs took the same actions on the same screens", style="bold green")
    return Group(_side("A", data["a"], data["by"]), _side("B", data["b"], data["by"]), table, verdict)


def csv_records(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The pairs as ``--format csv`` flattens them (``a_step_index``, ``a_action_type``, ``a_action_x``...):
    plain values, with whether the pair is the first divergence."""
    first = data["first_divergence"]["pair"] if data["first_divergence"] else None
    return [{"pair": p["pair"], "match": p["match"], "first_divergence": p["pair"] == first,
             **{k: v for k, v in p.items() if k not in ("pair", "match")}} for p in data["pairs"]]


@exit_on_error(ExitOutcome(Exit.USAGE, "a run, task or arm not in the ledger"),
               raises=(LedgerError,))
def diff(
    ledger_dir: LedgerArg,
    run_a: Annotated[Optional[str], typer.Argument(metavar="[RUN_A]", help="The first run (A), or none "
                                                   "with --task.", show_default=False)] = None,
    run_b: Annotated[Optional[str], typer.Argument(metavar="[RUN_B]", help="The second run (B).",
                                                   show_default=False)] = None,
    task: Annotated[Optional[str], typer.Option(help="Take one run of this task from each of two arms of --by.")]
    = None,
    by: ByOpt = None,
    pick: Annotated[str, typer.Option(help="When an arm has several runs of the task: first (the pair compare "
                                      "makes: the lowest trial both arms ran), best (as best-of ranks them) or a "
                                      "trial number.")] = "first",
    baseline: Annotated[Optional[str], typer.Option(help="The arm shown as A (default: the first by name).")] = None,
    arm: Annotated[Optional[str], typer.Option(help="The arm shown as B (default: the only other one).")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Show two runs of one task side by side, and the first step where they diverge.

    Their steps are aligned by screen (pHash, page) and action, so that a step one run took and the
    other did not leaves the later steps paired. They diverge at another screen, action or target,
    another result of the same action, an extra step, or where one run ended.

    Example: trajcheck diff ledger/ --task newsletter-subscribe --by config.perceptual_verifier
    """
    from ..commands import diff as run  # DuckDB loads when the command runs

    data = run(ledger_dir, run_a, run_b, task=task, by=by, pick=pick, baseline=baseline, arm=arm).to_json()
    if fmt is Format.json:
        print_json(data)
        return
    if fmt is Format.csv:  # plain values, each a column: the action's type and point, the state's id and kind
        emit(*flat_rows(csv_records(data)), fmt)
        return
    out.print(render(data), soft_wrap=False)  # lines wrap between words at the terminal's width
