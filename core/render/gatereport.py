"""A check's result (:mod:`trajcheck.queries.gate`) as text: rows for a table or CSV, Markdown for a pull-request
comment,
JUnit XML for CI systems. Each is made from the result alone: the same result gives the same bytes.

The JUnit XML has one ``<testcase>`` per rule and task (``classname`` the rule, ``name`` the task; the rule's row
over all runs is the test case named ``(all)``), a ``<failure>`` where the row fails, and the counts in
``<testsuite>``. It follows the schema CI systems read (Jenkins' junit-10.xsd, which GitLab and the GitHub
reporters accept): tests/test_check.py validates it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..queries.gate import GateResult, Finding, Row, Rule, RuleResult
from ..queries.gateruns import CONFIDENCE

#: The columns of :func:`rows` for people (the table; each rule's reason is printed under it) and for scripts (CSV).
TABLE_COLUMNS = ("rule", "scope", "verdict", "observed", f"{round(100 * CONFIDENCE)}% interval", "limit", "n")
CSV_COLUMNS = ("rule", "scope", "passed", "reason", "value", "low", "high", "limit", "n", "method", "why")
#: At most this many task rows of a rule for people (the table, a Markdown comment: GitHub takes 65,536
#: characters); the JSON and the CSV list all.
MAX_TASK_ROWS = 50
#: The verdict of a task beyond the limit on its own, while its rule holds, and what the mark means.
ALONE = "pass*"
ALONE_NOTE = "* beyond the limit on its own; the rule holds over all runs"


def _unit(rule: Rule) -> str:
    return " pp" if rule is Rule.MAX_SUCCESS_DROP else "%"


def _signed(rule: Rule) -> bool:
    """Figures against the baseline are changes: written with their sign."""
    return rule in (Rule.MAX_SUCCESS_DROP, Rule.MAX_COST_INCREASE)


def _num(rule: Rule, v: float | None) -> str:
    if v is None:
        return "-"
    return f"{100 * v:+.1f}" if _signed(rule) else f"{100 * v:.1f}"


def observed(rule: Rule, row: Row) -> str:
    """A row's figure with its unit: '35.7%', '+20.0 pp'."""
    return "-" if row.value is None else _num(rule, row.value) + _unit(rule)


def interval(rule: Rule, row: Row) -> str:
    """A row's interval: '[20.7, 54.2]%', or '-' without one."""
    if row.low is None or row.high is None:
        return "-"
    return f"[{_num(rule, row.low)}, {_num(rule, row.high)}]{_unit(rule)}"


def limit(r: RuleResult) -> str:
    """A rule's limit: '10.0%' (at most), '80.0%' (at least), '5.0 pp' (a drop), '20.0%' (an increase)."""
    return f"{100 * r.limit:.1f}{_unit(r.rule)}"


def verdict(row: Row) -> str:
    """'FAIL', 'pass', or :data:`ALONE` for a task beyond the limit whose rule holds."""
    return ALONE if row.reason is Finding.OVER_LIMIT_ALONE else "pass" if row.passed else "FAIL"


def shown(row: Row) -> bool:
    """Is a task's row worth a person's look: beyond its limit (failing with its rule, or alone)?"""
    return row.reason in (Finding.OVER_LIMIT, Finding.OVER_LIMIT_ALONE)


def beyond(r: RuleResult) -> list[Row]:
    """A rule's task rows beyond the limit: all failing (the rule fails) or all passing alone (it holds)."""
    return [g for g in r.groups if shown(g)]


def rows(result: GateResult, everything: bool = True) -> tuple[list[list[Any]], int]:
    """One row per rule and scope (:data:`TABLE_COLUMNS`): each rule's row over all runs, then its tasks' rows,
    all of them or (``everything`` False) at most :data:`MAX_TASK_ROWS` of those beyond the limit. With how many
    task rows were left out."""
    out = []
    total = 0
    for r in result.rules:
        tasks = r.groups if everything else beyond(r)[:MAX_TASK_ROWS]
        total += 1 + len(r.groups)
        for row in [r.overall, *tasks]:
            out.append([r.name, row.scope, verdict(row), observed(r.rule, row), interval(r.rule, row),
                        limit(r), row.n])
    return out, total - len(out)


def csv_rows(result: GateResult) -> list[list[Any]]:
    """Every row with its raw figures (:data:`CSV_COLUMNS`): fractions, not percentages."""
    out = []
    for r in result.rules:
        rule = str(r.name)
        for row in [r.overall, *r.groups]:  # the figures as the JSON rounds them, without building its rows
            out.append([rule, row.scope, row.passed, row.reason.value, *row.figures(), r.limit, row.n, row.method,
                        row.why])
    return out


def summary(result: GateResult) -> str:
    """One line: 'every rule holds (2 rules)' or '1 of 2 rules fails: max-success-drop'."""
    n = len(result.rules)
    if result.passed:
        return f"every rule holds ({n} rule{'s' if n != 1 else ''})"
    failed = result.failed
    return f"{len(failed)} of {n} rule{'s' if n != 1 else ''} fail{'s' if len(failed) == 1 else ''}: " + \
        ", ".join(failed)


def scope_line(result: GateResult) -> str:
    """What was judged: the ledger's runs and, against a baseline, the tasks both ran."""
    text = f"{result.ledger}: {result.runs} scored runs ({result.invalid} invalid, not judged)"
    if result.baseline is not None:
        text += f"; against {result.baseline}: {result.shared_tasks} tasks both ran"
    return text


def _md(text: str) -> str:
    """A table cell: pipes escaped, no line breaks."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(result: GateResult) -> str:
    """A pull-request comment: the verdict, each rule's row, and the tasks beyond a limit (at most
    :data:`MAX_TASK_ROWS` a rule)."""
    head = f"### trajcheck check: {'passed' if result.passed else 'FAILED'}: {summary(result)}"
    ci = f"{round(100 * CONFIDENCE)}% interval"
    lines = [head, "", _md(scope_line(result)), "",
             f"| rule | limit | observed | {ci} | verdict | why |", "|---|---|---|---|---|---|"]
    for r in result.rules:
        lines.append(f"| `{r.name}` | {limit(r)} | {observed(r.rule, r.overall)} | {interval(r.rule, r.overall)} | "
                     f"{_md_verdict(r.overall)} | {_md(r.overall.why)} |")
    over = [(r, g) for r in result.rules for g in beyond(r)]
    if over:
        failing = sum(1 for _, g in over if not g.passed)
        lines += ["", f"<details{' open' if failing else ''}><summary>{len(over)} {_md(result.by)} rows beyond a "
                  f"limit ({failing} failing with their rule)</summary>", "",
                  f"| rule | {_md(result.by)} | observed | {ci} | verdict | why |", "|---|---|---|---|---|---|"]
        for r in result.rules:
            for g in beyond(r)[:MAX_TASK_ROWS]:
                lines.append(f"| `{r.name}` | {_md(g.scope)} | {observed(r.rule, g)} | {interval(r.rule, g)} | "
                             f"{_md_verdict(g)} | {_md(g.why)} |")
        left = sum(max(0, len(beyond(r)) - MAX_TASK_ROWS) for r in result.rules)
        if left:
            lines.append(f"\n{left} more rows not shown: `--format csv` or `--format json` lists them all.")
        if any(g.reason is Finding.OVER_LIMIT_ALONE for _, g in over):
            lines.append("\n" + ALONE_NOTE.replace("*", "\\*", 1))
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _md_verdict(row: Row) -> str:
    return "**FAIL**" if not row.passed else verdict(row).replace("*", "\\*")


#: Characters XML 1.0 cannot hold at all (a task id may carry any) become U+FFFD; the three that markup uses, and in
#: an attribute the quote and the whitespace a parser would fold, their references. Most texts have none: a
#: regular expression finds those that do (the standard library's quoteattr and escape took 1.5 s of a check of
#: 10,000 tasks, a translate of every text 0.7 s).
_NOT_XML = [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0xD800, 0xE000), 0xFFFE, 0xFFFF]
_XML = {**dict.fromkeys(_NOT_XML, "\ufffd"), ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"}
_ATTR = {**_XML, ord('"'): "&quot;", ord("\n"): "&#10;", ord("\r"): "&#13;", ord("\t"): "&#9;"}
_XML_FOUND = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff&<>]")
_ATTR_FOUND = re.compile("[\x00-\x1f\ud800-\udfff\ufffe\uffff&<>\"]")


def _text(value: object) -> str:
    s = str(value)
    return s.translate(_XML) if _XML_FOUND.search(s) else s


def _attr(value: object) -> str:
    s = str(value)
    return s.translate(_ATTR) if _ATTR_FOUND.search(s) else s


_JUDGED = {"observed": "the observed figure", "interval": "the interval's lower bound"}


def _attrs(**values: object) -> str:
    return "".join(f' {k}="{_attr(v)}"' for k, v in values.items())


def junit(result: GateResult) -> str:
    """JUnit XML: one test case per rule and task, failures where a row fails, counts in the test suite. Written
    as text: ElementTree and its indent took 0.5 s of CPU for the 27,000 test cases of a 10,000-run check."""
    cases = [(r, row) for r in result.rules for row in [r.overall, *r.groups]]
    failures = sum(1 for _, row in cases if not row.passed)
    counts = {"tests": len(cases), "failures": failures, "errors": 0}
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f"<testsuites{_attrs(name='trajcheck check', **counts, time=0)}>",
           f"  <testsuite{_attrs(name='trajcheck check', **counts, skipped=0, time=0)}>", "    <properties>"]
    for name, value in [("ledger", result.ledger), ("baseline", result.baseline or ""), ("by", result.by),
                        *((r.name, f"{r.limit:g}") for r in result.rules)]:
        out.append(f"      <property{_attrs(name=name, value=value)} />")
    out.append("    </properties>")
    for r in result.rules:
        case = f'    <testcase classname="{_attr(r.name)}" name="'
        for row in [r.overall, *r.groups]:
            if row.passed:
                out.append(f'{case}{_attr(row.scope)}" time="0">\n      <system-out>{_text(row.why)}</system-out>\n'
                           "    </testcase>")
                continue
            judged = _JUDGED[r.judged_by] if row is r.overall else "its observed figure, the rule failing"
            text = (f"observed {observed(r.rule, row)}, {round(100 * CONFIDENCE)}% interval {interval(r.rule, row)}, "
                    f"limit {limit(r)} (judged by {judged}), n {row.n}, {row.method}")
            out.append(f'{case}{_attr(row.scope)}" time="0">\n      <failure{_attrs(message=row.why, type=row.reason)}>'
                       f"{_text(text)}</failure>\n    </testcase>")
    out += ["  </testsuite>", "</testsuites>"]
    return "\n".join(out) + "\n"


#: json.dumps(v, ensure_ascii=False) makes an encoder a call; a check of 10,000 tasks encodes 27,000 rows.
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _listed(items: list[str], indent: str) -> str:
    """A JSON list of already encoded ``items``, one to a line at ``indent``."""
    return "[" + "".join(f"\n{indent}  {item}," for item in items).rstrip(",") + (f"\n{indent}]" if items else "]")


#: Between two rows of a compact JSON list: no string holds it (a quote in a string is escaped), and no object
#: within a row has the key "scope".
_ROW = ', {"scope": '


def json_text(result: GateResult) -> str:
    """``result.to_json()`` as JSON text, indented but for the rows, one to a line: the same data as
    ``json.dumps(..., indent=2)`` (the other commands' --format json) in a fifth of the CPU and two thirds of
    the bytes for a check of 10,000 tasks, and a line per row for grep. Each rule's rows are encoded at once
    (the standard library's C encoder), then broken into lines between rows."""
    enc = _ENCODER.encode
    data = result.to_json()
    rules = []
    for r in data.pop("rules"):
        rows = enc(r.pop("groups"))
        groups = "[]" if rows == "[]" else \
            "[\n        " + rows[1:-1].replace(_ROW, ",\n        " + _ROW[2:]) + "\n      ]"
        rules.append("{" + "".join(f"\n      {enc(k)}: {enc(v)}," for k, v in r.items())
                     + f'\n      "groups": {groups}\n    }}')
    head = json.dumps(data, ensure_ascii=False, indent=2)
    return head[:-2] + f',\n  "rules": {_listed(rules, "  ")}\n}}\n'
