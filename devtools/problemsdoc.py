"""docs/problems.md, the reference page of the problems trajcheck reports, generated from the catalogue
(:mod:`trajcheck.base.problems` ``SECTIONS`` and ``RETIRED``)::

    python -m devtools.problemsdoc > docs/problems.md
"""

from __future__ import annotations

from trajcheck.base.problems import REGENERATE, RETIRED, SECTIONS, ProblemKind


def _cell(text: str) -> str:
    """``text`` safe inside one Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _severity_cell(kind: ProblemKind) -> str:
    return f"{kind.severity}; {kind.severities[1]} {kind.other}" if kind.other else kind.severity


def markdown() -> str:
    """The reference page docs/problems.md: one table per section (slug, severity, what it means, what
    to do), generated from ``SECTIONS``, then the retired slugs (``RETIRED``)."""
    out = ["# Problems trajcheck reports", "",
           f"<!-- generated from core/base/problems.py by `{REGENERATE}`; do not edit by hand -->", "",
           ("`trajcheck validate` lists these (with run, file, line and field); `trajcheck score` stores them "
            "in the ledger's `runs.error` (the run is invalid) and `runs.warnings` (the run is scored). "
            "**error**: the run, or the path argument, is not scored; **warning**: reported, and the run is "
            "still scored. The hint a problem carries may be more specific than the one below."), ""]
    for title, kinds in SECTIONS:
        out += [f"## {title}", "", "| slug | severity | what it means | what to do |", "|---|---|---|---|"]
        out += [f"| `{k.slug}` | {_cell(_severity_cell(k))} | {_cell(k.means)} | {_cell(k.hint)} |" for k in kinds]
        out.append("")
    out += ["## Retired slugs", "",
            ("Ledgers written before a slug was retired store the old name. trajcheck reads them with the current "
             "name (the `runs` view of `trajcheck query` and `trajcheck.connect` rewrites `error` and `warnings`), "
             "and the SQL macro `has_problem(column, slug)` matches a slug or any name it replaced, in any ledger: "
             "`select run_id from runs where has_problem(warnings, 'history_ambiguous')`."), "",
            "| retired slug | now | why |", "|---|---|---|"]
    out += [f"| `{r.slug}` | {', '.join(f'`{s}`' for s in r.now)} | {_cell(r.why)} |" for r in RETIRED]
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(markdown(), end="")
