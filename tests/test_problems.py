"""The problem catalogue (trajcheck.base.problems): ``Slug`` and the catalogue hold the same slugs, every slug is
made somewhere, the code names slugs by ``Slug`` members only (never a free string), severities written at
call sites are declared, docs/problems.md is the generated page, and ``Problem`` refuses undeclared slugs.

The type checker sees that every ``Slug.NAME`` exists and that helpers taking a slug get a ``Slug``; what it
cannot see is read here with ``ast``: a string literal spelling a slug (a call site that bypasses the enum),
a member no code uses, and the severity a call site gives.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from trajcheck.base.errors import Problem
from trajcheck.base.problems import ALIASES, CATALOGUE, REGENERATE, RETIRED, SECTIONS, Slug, lookup

from devtools.problemsdoc import markdown

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("trajcheck", "trajcheck.cli", "trajcheck.analyzers", "trajcheck.schemas")
#: Literals that spell a slug but mean something else there: (file name, text).
NOT_SLUGS = frozenset({("digest.py", "schema"),  # the digest's key for the schema version
                       # the frame problems a step's evidence carries are effect reasons too (tests/test_reasons.py)
                       *(("reasons.py", s) for s in ("frames_missing", "frame_unreadable", "frame_too_large",
                                                     "not_a_regular_file"))})


def _sources() -> list[tuple[str, ast.Module]]:
    out = []
    for name in PACKAGES:
        base = Path(importlib.import_module(name).__file__ or "").parent
        out += [(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p), ast.parse(p.read_text(encoding="utf-8")))
                for p in sorted(base.rglob("*.py")) if p.name != "problems.py"]
    assert len(out) > 40, "the package sources were not found"
    return out


def _member(node: ast.AST | None) -> str | None:
    """``X`` for the expression ``Slug.X``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Slug":
        return node.attr
    return None


def free_strings(sources: list[tuple[str, ast.Module]], names: set[str]) -> list[str]:
    """Every string literal that spells one of ``names`` (a slug, or a retired one), as 'text at path:line'."""
    return [f"{n.value!r} at {path}:{n.lineno}" for path, tree in sources for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names
            and (Path(path).name, n.value) not in NOT_SLUGS]


def members_used(sources: list[tuple[str, ast.Module]]) -> set[str]:
    return {m for _, tree in sources for n in ast.walk(tree) if (m := _member(n)) is not None}


def _call_severity(call: ast.Call) -> str | None:
    """The severity a call gives its problem: a literal ``severity=``, else what its helper implies
    (``Problems.warn`` a warning, ``Problems.error`` and ``Problem`` an error); None when not written there."""
    sev = next((k.value for k in call.keywords if k.arg == "severity"), None)
    if sev is not None:
        return sev.value if isinstance(sev, ast.Constant) and isinstance(sev.value, str) else None
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return {"warn": "warning", "error": "error", "Problem": "error"}.get(name)


def severities(sources: list[tuple[str, ast.Module]]) -> Iterator[tuple[str, str, str]]:
    """(member, severity, where) for every call that makes a problem of a ``Slug`` member with a known
    severity, and every ``p.slug, p.severity = Slug.X, "..."`` re-labelling."""
    for path, tree in sources:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                args = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "slug")]
                member = next((m for a in args if (m := _member(a)) is not None), None)
                if member is not None and (sev := _call_severity(node)) is not None:
                    yield member, sev, f"{path}:{node.lineno}"
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple) \
                    and isinstance(node.value, ast.Tuple):
                pairs = {t.attr: v for t, v in zip(node.targets[0].elts, node.value.elts) if isinstance(t, ast.Attribute)}
                member, sev = _member(pairs.get("slug")), pairs.get("severity")
                if member is not None and isinstance(sev, ast.Constant):
                    yield member, str(sev.value), f"{path}:{node.lineno}"


@pytest.fixture(scope="module")
def sources() -> list[tuple[str, ast.Module]]:
    return _sources()


SAMPLE = """
def f(p, problems):
    Problem(Slug.A_SLUG, "m")
    problems.warn(Slug.B_SLUG, "m")
    bad(slug=Slug.C_SLUG, msg="m", severity="warning")
    FrameError(Slug.D_SLUG, "m")
    p.slug, p.severity = Slug.E_SLUG, "warning"
    Problem("free_slug", "m")
    return {"free_slug": 1}, "schema", Slug.F_SLUG
"""


def test_the_scanners_read_each_route() -> None:
    sample = [("core/scoring/digest.py", ast.parse(SAMPLE))]
    assert free_strings(sample, {"free_slug", "schema"}) == ["'free_slug' at core/scoring/digest.py:8",
                                                              "'free_slug' at core/scoring/digest.py:9"]
    assert free_strings([("core/other.py", sample[0][1])], {"schema"}) == ["'schema' at core/other.py:9"]
    assert members_used(sample) == {"A_SLUG", "B_SLUG", "C_SLUG", "D_SLUG", "E_SLUG", "F_SLUG"}
    assert sorted(severities(sample)) == [("A_SLUG", "error", "core/scoring/digest.py:3"),
                                          ("B_SLUG", "warning", "core/scoring/digest.py:4"),
                                          ("C_SLUG", "warning", "core/scoring/digest.py:5"),
                                          ("E_SLUG", "warning", "core/scoring/digest.py:7")]


def test_enum_and_catalogue_hold_the_same_slugs() -> None:
    assert list(CATALOGUE) == [k.slug for _, kinds in SECTIONS for k in kinds]  # no slug declared twice
    assert sorted(CATALOGUE) == sorted(Slug)
    assert all(m.name == m.value.upper() for m in Slug)  # Slug.JSON_INVALID is "json_invalid"


@pytest.mark.slow
def test_no_slug_is_a_free_string(sources: list[tuple[str, ast.Module]]) -> None:
    found = free_strings(sources, {*map(str, Slug), *ALIASES})
    assert not found, "name these by Slug (trajcheck.base.problems), not by a string: " + "; ".join(found)


@pytest.mark.slow
def test_every_declared_slug_is_used(sources: list[tuple[str, ast.Module]]) -> None:
    dead = sorted(m.name for m in Slug if m.name not in members_used(sources))
    assert not dead, f"declared in core/base/problems.py but used nowhere: {dead} (remove them)"


@pytest.mark.slow
def test_severities_at_call_sites_are_declared(sources: list[tuple[str, ast.Module]]) -> None:
    seen = list(severities(sources))
    assert len(seen) > 80  # the scanner still finds the call sites
    wrong = sorted(f"{m} as {sev} at {where}" for m, sev, where in seen if sev not in CATALOGUE[Slug[m]].severities)
    assert not wrong, "severity not declared in core/base/problems.py: " + "; ".join(wrong)


def test_retired_slugs_name_their_successors() -> None:
    for r in RETIRED:
        assert r.slug not in set(map(str, Slug)) and r.now, r.slug  # never reused, and replaced by something
        assert len(r.when) == (len(r.now) if len(r.now) > 1 else 0), r.slug  # a split says which text is which
        assert all(re.compile(w) for w in r.when)
    assert ALIASES["history_ambiguous"] == (Slug.STEPS_AMBIGUOUS,)
    with pytest.raises(ValueError, match="'wrong_type' is retired: use record_not_object or score_not_a_number"):
        lookup("wrong_type")


def test_docs_page_is_generated() -> None:
    committed = (ROOT / "docs" / "problems.md").read_text(encoding="utf-8")
    assert committed == markdown(), f"docs/problems.md is out of date: run `{REGENERATE}`"


def test_the_regenerate_command_prints_the_page() -> None:
    done = subprocess.run([sys.executable, "-m", "devtools.problemsdoc"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")  # no runpy warning: the module was not imported early
    assert done.stdout == markdown()


def test_page_has_one_row_per_slug_under_its_section() -> None:
    page, retired = markdown().split("\n## Retired slugs\n")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) == len(CATALOGUE) == sum(len(kinds) for _, kinds in SECTIONS)  # no slug declared twice
    assert [line[3:] for line in page.splitlines() if line.startswith("## ")] == [t for t, _ in SECTIONS]
    assert [line.split(" | ")[:2] for line in retired.splitlines() if line.startswith("| `")] == [
        ["| `history_ambiguous`", "`steps_ambiguous`"], ["| `trace_unreadable`", "`file_unreadable`"],
        ["| `wrong_type`", "`record_not_object`, `score_not_a_number`"],
        ["| `action_missing`", "`action_null`, `step_without_action`"]]
    assert ("| `mapping_matches_nothing` | error; warning for a step field that matches nothing in any step "
            "of a run | A `--mapping` file matches no log, or its `steps` expression gives no list of steps. "
            "| check the mapping's expressions against one log (jmespath.org) and `files` against the log's "
            "name |") in rows
    assert "| `steps_gap` | warning | BrowserGym step files are missing in the middle of the episode. | " \
           "copy every step_N.pkl.gz; the steps around the gap have no before/after state |" in rows
    assert all(line.count(" | ") == 3 for line in rows)  # a "|" in a text would add a column


def test_entries_are_complete() -> None:
    for slug, kind in CATALOGUE.items():
        assert slug == kind.slug and slug.isidentifier() and slug == slug.lower(), slug
        assert kind.means.endswith(".") and kind.hint and not kind.hint.endswith("."), slug
        assert kind.severities[0] == kind.severity and len(set(kind.severities)) == len(kind.severities)
    assert CATALOGUE["path_escapes_run"].severities == ("error", "warning")
    assert CATALOGUE["contract_invalid"].severities == ("warning",)


def test_unknown_slug_raises() -> None:
    with pytest.raises(ValueError) as exc:
        Problem("no_such_slug", "something")
    assert str(exc.value) == ("unknown problem slug 'no_such_slug': declare it in core/base/problems.py "
                              "(trajcheck.base.problems), then run `python -m devtools.problemsdoc > docs/problems.md`")


def test_relabelling_to_an_unknown_slug_raises() -> None:
    p = Problem("json_invalid", "not valid JSON", hint="h")
    p.slug = "contract_invalid"  # as contracts.py does
    assert str(p) == "not valid JSON (hint: h) [contract_invalid]"
    with pytest.raises(ValueError, match="'contract_invald'"):
        p.slug = "contract_invald"
    assert p.slug is Slug.CONTRACT_INVALID  # a string given at run time is replaced by its member


def test_a_slug_is_stored_and_printed_as_its_text() -> None:
    import json

    p = Problem(Slug.STEPS_GAP, "m", severity="warning")
    assert str(p).endswith("[steps_gap]") and json.dumps(p.to_dict()["slug"]) == '"steps_gap"'
    assert f"{p.slug}" == "steps_gap" and p.slug == "steps_gap"


def test_unknown_severity_raises() -> None:
    with pytest.raises(ValueError, match="'warn'"):
        Problem("steps_gap", "m", severity="warn")


def test_missing_hint_is_the_catalogues() -> None:
    assert str(Problem("steps_empty", "no steps", run="r1")) == \
        "run r1: no steps (hint: a run needs at least one step with an action) [steps_empty]"
    assert Problem("steps_empty", "no steps", hint="write a step").hint == "write a step"


def test_more_problems_keeps_its_ledger_text() -> None:
    # its text without a hint is stored in ledgers already written (runs.error)
    assert str(Problem("more_problems", "3 more errors not shown", run="r1")) == \
        "run r1: 3 more errors not shown [more_problems]"
