"""Issue 48, item 5: the report's index shows each run's contract score (``runs.contract_score``), sortable as
its other columns are; empty for a run without a contract or a decided check."""

from __future__ import annotations

from trajcheck.render.htmlreport import _runs_table


def _row(run_id: str, score: float | None) -> dict:
    return {"run_id": run_id, "status": "ok", "eval_final_verdict": "fail", "contract_score": score,
            "n_steps": 3, "source_format": "trajcheck.run/1"}


def test_the_index_has_a_contract_score_column():
    html = _runs_table([_row("partial", 2 / 3), _row("none", None)], {}, None)
    head = html.split("<thead>")[1].split("</thead>")[0]
    assert "<th>contract score</th>" in head
    partial, none = html.split("<tbody>")[1].split("</tr>")[:2]
    assert partial.endswith("<td>0.67</td>") and none.endswith("<td></td>")
    assert head.count("<th>") == partial.count("<td")  # one cell per column
