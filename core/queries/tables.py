"""Summary tables for benchmark reports, and their renderings (one place per format).

Every renderer is deterministic: the same table gives byte-identical output.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..store import ledger
from ..base import stats
from .armspend import Spend, spend_of
from .comparison import compare, outcome_of
from ..base.errors import UsageError
from ..base.verdicts import coverage
from ..base.version import __version__
from .views import group_expr

EXPORT_TABLES = ("summary", "per-task", "per-action-type", "compare")


@dataclass(frozen=True)
class Cell:
    """A value and how it reads: ``value`` is plain data (a number, a fraction, the figures of a rate or a
    mean, None when missing), what CSV and JSON hold; ``text`` is what md, LaTeX and HTML show."""

    value: Any
    text: str


@dataclass(frozen=True)
class ReportTable:
    name: str
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


def _rate_cell(r: stats.Rate) -> Cell:
    value, low, high = r.value, r.low, r.high
    if value is None or low is None or high is None:  # no runs (stats.wilson gives all three when n > 0)
        return Cell(r.to_json(), "-")
    return Cell(r.to_json(), f"{100 * value:.1f}% [{100 * low:.1f}, {100 * high:.1f}]")


#: A rate no row has: its figures, all empty, so that the plain columns are the same in every row.
_NO_RATE = Cell({"k": None, "n": None, "rate": None, "low": None, "high": None}, "-")


def _num(v: float | None, digits: int = 2) -> Cell:
    return Cell(None if v is None else round(v, 6), "-" if v is None else f"{v:.{digits}f}")


def _pct(v: float | None) -> Cell:
    """A share as a percentage with one decimal ("-" without one)."""
    return Cell(None if v is None else round(v, 6), "-" if v is None else f"{100 * v:.1f}%")


def _coverage(rows: list[dict[str, Any]]) -> Cell:
    """How many of the runs have a verdict, by source: '12/14: contract 11, evidence 1' (JSON: the counts)."""
    c = coverage(rows)
    sources = ", ".join(f"{s.replace('_', ' ')} {n}" for s, n in c.by_source.items())
    return Cell(c.to_json(), f"{c.decided}/{c.runs}" + (f": {sources}" if sources else ""))


def _int(v: int | None) -> Cell:
    return Cell(v, "-" if v is None else str(v))


def _txt(v: Any) -> Cell:
    return Cell(None if v is None else str(v), "-" if v is None else str(v))


SUCCESS_NOTE = "success = final verdict pass (else outcome score >= {s:g}); intervals are 95% Wilson"
SPEND_NOTE = ("; cost and seconds per run are means with a 95% Student's t interval (over the runs with the "
              "figure); cost per success is the cost of the runs with a cost over their successes, steps per "
              "success every step over the successes")


def money(v: float | None) -> str:
    """An amount in USD: four decimals below a dollar (a step costs cents), two above; "-" without one."""
    if v is None:
        return "-"
    return f"${v:.4f}" if abs(v) < 1 else f"${v:,.2f}"


def _mean_cell(m: stats.Mean | None, fmt: Callable[[float], str]) -> Cell:
    """A mean with its interval: '$0.0320 [0.0210, 0.0430]' (n = 1: the value alone)."""
    if m is None:
        return Cell(None, "-")
    ci = f" [{fmt(m.low).lstrip('$')}, {fmt(m.high).lstrip('$')}]" if m.low is not None and m.high is not None \
        else ""
    return Cell(m.to_json(), fmt(m.value) + ci)


def _share(part: float | None, total: float | None) -> Cell:
    """An amount spent and its share of the total: '$0.0138 (21%)'."""
    if part is None:
        return Cell(None, "-")
    share = f" ({100 * part / total:.0f}%)" if total else ""
    return Cell(round(part, 6), money(part) + share)


#: The spend columns: (column, whether it needs a cost or a time in the ledger, the cell of a Spend).
SPEND_COLUMNS: tuple[tuple[str, str, Callable[[Spend], Cell]], ...] = (
    ("cost/run", "cost", lambda s: _mean_cell(s.cost_per_run, money)),
    ("cost/success", "cost", lambda s: Cell(None if s.cost_per_success is None else round(s.cost_per_success, 6),
                                            money(s.cost_per_success))),
    ("steps/success", "any", lambda s: _num(s.steps_per_success, 1)),
    ("seconds/run", "seconds", lambda s: _mean_cell(s.seconds_per_run, lambda v: f"{v:.1f}")),
    ("cost no-effect steps", "cost", lambda s: _share(s.cost_no_effect, s.cost_total)),
    ("cost false claims", "cost", lambda s: _share(s.cost_false_claims, s.cost_total)),
)


def spend_columns(has_cost: bool, has_seconds: bool) -> list[tuple[str, Callable[[Spend], Cell]]]:
    """The spend columns a table shows: those whose figures the ledger has (none without cost or time)."""
    if not (has_cost or has_seconds):
        return []
    return [(name, cell) for name, need, cell in SPEND_COLUMNS
            if need == "any" or (need == "cost" and has_cost) or (need == "seconds" and has_seconds)]


def _runs(ledger_dir: str | os.PathLike[str], group: str | None) -> list[dict[str, Any]]:
    con = ledger.connect(ledger_dir)
    try:
        expr = group_expr(group) if group else "'all'"
        cur = con.execute(f"select CAST({expr} AS VARCHAR) as grp, run_id, task_id, status, eval_final_verdict, "
                          "outcome_score, false_claim, claimed_success, n_steps, effect_checked, effect_no_effect, "
                          "loops, reward_total, states_returning, stalled_from_step, efficiency, verdict_source, "
                          "cost_usd, wall_seconds, no_effect.cost as no_effect_cost "
                          "from runs left join (select run_id as rid, sum(cost_usd) as cost from steps "
                          "where action_effect_observed = false group by run_id) no_effect on rid = run_id "
                          "where status = 'ok' order by grp, run_id")
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise UsageError(f"--by {group}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()


def _mean(xs: list[Any]) -> float | None:
    v = [float(x) for x in xs if x is not None]
    return sum(v) / len(v) if v else None


def summary(ledger_dir: str | os.PathLike[str], by: str | None, success_score: float) -> ReportTable:
    rows = _runs(ledger_dir, by)
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        r["success"] = outcome_of(r, success_score)[0]
        groups.setdefault(r["grp"] or "(null)", []).append(r)
    has = (any(r["cost_usd"] is not None for r in rows), any(r["wall_seconds"] is not None for r in rows))
    spent = spend_columns(*has)
    out = []
    for g, rs in sorted(groups.items()):
        n = len(rs)
        succ = sum(r["success"] for r in rs)
        checked = sum(r["effect_checked"] or 0 for r in rs)
        spend = spend_of(rs, succ, *has)
        out.append((_txt(g), _int(n), _int(len({r["task_id"] for r in rs})), _rate_cell(stats.wilson(succ, n)),
                    _rate_cell(stats.wilson(sum(r["eval_final_verdict"] == "uncertain" for r in rs), n)),
                    _rate_cell(stats.wilson(sum(bool(r["false_claim"]) for r in rs), n)),
                    _num(_mean([r["n_steps"] for r in rs]), 1),
                    _rate_cell(stats.wilson(sum(r["effect_no_effect"] or 0 for r in rs), checked)),
                    _num(_mean([r["loops"] for r in rs])), _num(_mean([r["reward_total"] for r in rs])),
                    _pct(_mean([r["states_returning"] for r in rs])),
                    _num(_mean([r["stalled_from_step"] for r in rs]), 1),
                    _num(_mean([r["efficiency"] for r in rs if r["success"]])),
                    _coverage(rs), *(cell(spend) for _, cell in spent if spend is not None)))
    return ReportTable("summary", f"Summary by {by or 'all runs'}; " + SUCCESS_NOTE.format(s=success_score)
                       + "; efficiency is the reference step count over the steps taken, of the runs that passed"
                       + (SPEND_NOTE if spent else ""),
                       (by or "group", "runs", "tasks", "success", "uncertain", "false claims", "mean steps",
                        "no-effect rate", "loops/run", "mean reward", "steps returning", "stalled from",
                        "efficiency", "verdicts", *(name for name, _ in spent)), tuple(out))


def per_task(ledger_dir: str | os.PathLike[str], by: str | None, success_score: float) -> ReportTable:
    rows = _runs(ledger_dir, by)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["task_id"] or r["run_id"], r["grp"] or "(null)"), []).append(r)
    out = []
    for (task, g), rs in sorted(groups.items()):
        n = len(rs)
        succ = sum(outcome_of(r, success_score)[0] for r in rs)
        out.append((_txt(task), _txt(g), _int(n), _int(succ), _rate_cell(stats.wilson(succ, n)),
                    _int(sum(r["eval_final_verdict"] == "uncertain" for r in rs)),
                    _int(sum(bool(r["false_claim"]) for r in rs)), _num(_mean([r["n_steps"] for r in rs]), 1)))
    return ReportTable("per-task", "Per task; " + SUCCESS_NOTE.format(s=success_score),
                       ("task", by or "group", "runs", "passed", "success", "uncertain", "false claims",
                        "mean steps"), tuple(out))


def per_action_type(ledger_dir: str | os.PathLike[str], by: str | None, success_score: float) -> ReportTable:
    con = ledger.connect(ledger_dir)
    try:
        res = con.execute(
            "select action_type, count(*), count(*) filter (where effect_high_risk), "
            "count(action_effect_observed), count(*) filter (where action_effect_observed = false), "
            "count(*) filter (where action_effect_observed_seed = false), avg(reward_score), "
            "count(*) filter (where reward_class in ('negative', 'hard_negative')) "
            "from steps group by action_type order by action_type").fetchall()
    finally:
        con.close()
    out = []
    for t, n, hr, checked, no, no_seed, rew, neg in res:
        out.append((_txt(t), _int(n), _int(hr), _int(checked), _rate_cell(stats.wilson(no, checked)),
                    _rate_cell(stats.wilson(no_seed, checked)), _num(rew), _rate_cell(stats.wilson(neg, n))))
    return ReportTable("per-action-type", "Per action type: high-risk steps checked by the perceptual verifier; "
                       "no-effect rates for trajcheck's rule and the seed's; intervals are 95% Wilson",
                       ("action", "steps", "high-risk", "checked", "no effect", "no effect (seed rule)",
                        "mean reward", "negative"), tuple(out))


def compare_table(ledger_dir: str | os.PathLike[str], by: str | None, success_score: float) -> ReportTable:
    if not by:
        raise UsageError("--table compare needs --by (e.g. --by config.perceptual_verifier)")
    c = compare([ledger_dir], by, success_score)
    spent = spend_columns(any(a.spend is not None and a.spend.runs_with_cost for a in c.arms),
                          any(a.spend is not None and a.spend.runs_with_seconds for a in c.arms))
    rows = []
    for a in c.arms:
        w = a.warnings
        rows.append((_txt(a.name), _int(a.runs), _rate_cell(a.success), _rate_cell(a.uncertain),
                     _rate_cell(a.false_claim), _num(a.no_effect_per_run), _num(a.mean_reward), _pct(a.returning),
                     _num(a.stalled_from, 1), _int(w.count if w else None),
                     _rate_cell(w.recovered) if w else _NO_RATE, _rate_cell(w.false) if w else _NO_RATE,
                     *(cell(a.spend) for _, cell in spent if a.spend is not None)))
    note = ""
    for p in c.pairings:
        if p.difference is not None:
            note += (f"; paired ({p.pairs} pairs) {p.arm} - {p.baseline}: {100 * p.difference:+.1f} pp "
                     f"[{100 * (p.low or 0):+.1f}, {100 * (p.high or 0):+.1f}], exact McNemar p = "
                     f"{'-' if p.mcnemar_p is None else f'{p.mcnemar_p:.4f}'}")
    return ReportTable("compare", f"Arms by {by}; " + SUCCESS_NOTE.format(s=success_score)
                       + (SPEND_NOTE if spent else "") + note,
                       (by, "runs", "success", "uncertain", "false claims", "no-effect/run", "mean reward",
                        "steps returning", "stalled from", "warnings", "recovered after warning", "false warnings",
                        *(name for name, _ in spent)),
                       tuple(rows))


BUILDERS: dict[str, Callable[[str | os.PathLike[str], str | None, float], ReportTable]] = {
    "summary": summary, "per-task": per_task, "per-action-type": per_action_type, "compare": compare_table}


def build(ledger_dir: str | os.PathLike[str], table: str, by: str | None = None,
          success_score: float = 1.0) -> ReportTable:
    if table not in BUILDERS:
        raise UsageError(f"no table {table!r}; tables: {', '.join(EXPORT_TABLES)}")
    return BUILDERS[table](ledger_dir, by, success_score)


def _caption(t: ReportTable) -> str:
    return f"{t.caption}. trajcheck {__version__}."


def to_markdown(t: ReportTable) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    lines = [f"Table: {esc(_caption(t))}", "", "| " + " | ".join(map(esc, t.columns)) + " |",
             "|" + "|".join("---" for _ in t.columns) + "|"]
    lines += ["| " + " | ".join(esc(c.text) for c in r) + " |" for r in t.rows]
    return "\n".join(lines) + "\n"


def plain_key(column: str) -> str:
    """A column of a table for people as a key of its plain values: 'no-effect/run' -> 'no_effect_per_run';
    'no-effect rate' -> 'no_effect' (its figures are ``no_effect_rate``, ``no_effect_low``...)."""
    key = re.sub(r"[^a-z0-9]+", "_", column.lower().replace("/", " per ")).strip("_")
    return key.removesuffix("_rate") or "column"


def records(t: ReportTable) -> list[dict[str, Any]]:
    """The table's rows as plain values (what ``--format json`` and ``csv`` hold), keyed by :func:`plain_key`:
    a rate as its figures (``{"k", "n", "rate", "low", "high"}``), a mean with its interval, a count, a
    fraction, None for a value missing; never the text a table for people shows."""
    keys = [plain_key(c) for c in t.columns]
    return [dict(zip(keys, (c.value for c in r))) for r in t.rows]


def flat_rows(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """Records of plain values as CSV columns and rows: each figure nested in a record is a column of its own
    (``{"success": {"rate": 0.5}}`` -> ``success_rate``), the columns in the order of the records' keys, each
    key's in the order first seen; a value a row lacks, or a None where other rows have figures, is None."""
    shape: dict[str, Any] = {}
    for r in rows:
        _merge(shape, r)
    paths = _leaves(shape, ())
    return (["_".join(p) for p in paths], [[_at(r, p) for p in paths] for r in rows])


def _merge(shape: dict[str, Any], record: Mapping[str, Any]) -> None:
    for k, v in record.items():
        node = shape.setdefault(str(k), {})  # {}: a leaf, unless a row gives it figures
        if isinstance(v, Mapping):
            _merge(node, v)


def _leaves(shape: dict[str, Any], prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [p for k, sub in shape.items() for p in (_leaves(sub, (*prefix, k)) if sub else [(*prefix, k)])]


def _at(record: Any, path: tuple[str, ...]) -> Any:
    for k in path:
        record = record.get(k) if isinstance(record, Mapping) else None
    return None if isinstance(record, Mapping) else record  # {}: figures no row has


def to_csv(t: ReportTable) -> str:
    """The table's plain values (:func:`records`, each figure a column: :func:`flat_rows`), empty for None."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    columns, rows = flat_rows(records(t))
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if v is None else json.dumps(v) if isinstance(v, list) else v for v in r])
    return buf.getvalue()


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(s: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in s)


def to_latex(t: ReportTable) -> str:
    """A booktabs tabular, ready to \\input inside a table environment."""
    spec = "l" + "r" * (len(t.columns) - 1)
    lines = [f"% {_caption(t)}", f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(latex_escape(c) for c in t.columns) + r" \\", "\\midrule"]
    lines += [" & ".join(latex_escape(c.text) for c in r) + r" \\" for r in t.rows]
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def to_html(t: ReportTable) -> str:
    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in t.columns)
    body = "".join("<tr>" + "".join(f"<td>{e(c.text)}</td>" for c in r) + "</tr>\n" for r in t.rows)
    return (f'<table class="trajcheck">\n<caption>{e(_caption(t))}</caption>\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}</tbody>\n</table>\n")


def to_json(t: ReportTable) -> str:
    """The caption, the keys of the columns (:func:`plain_key`) and the rows as :func:`records`: plain values."""
    return json.dumps({"table": t.name, "caption": _caption(t), "columns": [plain_key(c) for c in t.columns],
                       "rows": records(t)}, indent=2, sort_keys=True) + "\n"


RENDERERS: dict[str, Callable[[ReportTable], str]] = {
    "md": to_markdown, "csv": to_csv, "latex": to_latex, "html": to_html, "json": to_json}
