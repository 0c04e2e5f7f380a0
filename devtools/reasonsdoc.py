"""The reference page docs/reasons.md, generated from the reason catalogue (:mod:`trajcheck.base.reasons`)::

    python -m devtools.reasonsdoc > docs/reasons.md

Kept apart from the catalogue, which every analyzer imports: the catalogue holds the values and their meanings,
this module only prints them (it imports the catalogue; the catalogue never imports it).
"""

from __future__ import annotations

from trajcheck.base.reasons import REGENERATE, SECTIONS


def markdown() -> str:
    """The reference page docs/reasons.md: one section per set of values, generated from ``SECTIONS``."""
    out = ["# Reasons and codes in the ledger", "",
           f"<!-- generated from core/base/reasons.py by `{REGENERATE}`; do not edit by hand -->", "",
           ("The analyzers explain every verdict and score with a short, stable value. Each section lists the "
            "values one or more columns hold ([columns.md](columns.md) links each column here). What is wrong "
            "with a run's files is another list: [problems.md](problems.md)."), ""]
    for s in SECTIONS:
        cols = ", ".join(f"`{c}`" for c in s.columns)
        where = f"Columns: {cols}. A cell holds {s.form}." if s.columns else f"Output of {s.output}: {s.form}."
        out += [f"## {s.title}", "", where, "",
                "| value | what it means |", "|---|---|"]
        out += ["| `" + v + "` | " + s.means[v].replace("|", "\\|").replace("\n", " ") + " |" for v in s.values]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(markdown(), end="")
