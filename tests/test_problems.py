"""The problem catalogue (trajcheck.problems): every slug the code emits is declared, every declared slug
is emitted somewhere, docs/problems.md is the generated page, and ``Problem`` refuses undeclared slugs.

The code is read with ``ast``, never run: a slug reaches a ``Problem`` as the first argument of
``Problem(...)`` or of a helper that takes a ``slug`` parameter (``FrameError``, an adapter's ``_warn``,
``bad``...: found by that parameter's name), through an assignment to ``.slug``, or, in two places, as
the first item of a ``(slug, message)`` tuple (listed in ``SLUG_TUPLES``).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from trajcheck.errors import Problem
from trajcheck.problems import CATALOGUE, REGENERATE, SECTIONS, markdown

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("trajcheck", "trajcheck.cli", "trajcheck.analyzers", "trajcheck.schemas")
#: Modules that declare the catalogue and the Problem class: their ``slug`` parameters look slugs up,
#: they do not emit them.
NOT_EMITTERS = frozenset({"problems.py", "errors.py"})
#: Where a slug travels as the first item of a tuple: (variable name, function name) — a tuple assigned to
#: that variable (core/dom.py) or returned by that function (core/validation.py ``_frame_header``).
SLUG_TUPLES = ({"problem"}, {"_frame_header"})
#: Modules whose methods share a helper's name (``warnings.warn``, ``logging.error``) but take no slug.
NOT_HELPERS = frozenset({"warnings", "logging", "logger", "log"})


@dataclass(frozen=True)
class Use:
    """One place a slug literal is written: ``emits`` when it makes or re-labels a problem, False when it
    only compares or maps a slug; ``severity`` when it is known there."""

    slug: str
    where: str
    emits: bool
    severity: str | None = None


def _sources() -> list[tuple[str, ast.Module]]:
    out = []
    for name in PACKAGES:
        base = Path(importlib.import_module(name).__file__ or "").parent
        out += [(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p), ast.parse(p.read_text(encoding="utf-8")))
                for p in sorted(base.rglob("*.py"))]
    assert len(out) > 40, "the package sources were not found"
    return out


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _params(fn: ast.FunctionDef) -> list[str]:
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _default_severity(fn: ast.FunctionDef) -> str | None:
    """The severity a helper gives when its caller names none: the literal default of its ``severity``
    parameter, else the literal ``severity=`` of the call it makes (a ``Problem`` without one: "error");
    None when that is not written down (an exception such as FrameError: the code that catches it decides)."""
    a = fn.args
    defaults = dict(zip([x.arg for x in a.posonlyargs + a.args][::-1], a.defaults[::-1]))
    defaults.update((x.arg, d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)
    if "severity" in defaults:
        return _literal(defaults["severity"])
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            sev = next((k.value for k in node.keywords if k.arg == "severity"), None)
            if sev is not None or (isinstance(node.func, ast.Name) and node.func.id == "Problem"):
                return "error" if sev is None else _literal(sev)
    return None


def _helpers(sources: list[tuple[str, ast.Module]]) -> dict[str, tuple[int, str | None]]:
    """Callables taking a slug: name -> (index of the slug among the positional arguments, severity when
    the call names none)."""
    found: dict[str, set[tuple[int, str | None]]] = {"Problem": {(0, "error")}}
    for path, tree in sources:
        if Path(path).name in NOT_EMITTERS:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):  # a class is called by its name: FrameError(slug, message)
                fns = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
            elif isinstance(node, ast.FunctionDef) and node.name != "__init__":
                fns = [node]
            else:
                continue
            for fn in (f for f in fns if "slug" in _params(f)):
                found.setdefault(node.name, set()).add((_params(fn).index("slug"), _default_severity(fn)))
    out: dict[str, tuple[int, str | None]] = {}
    for name, seen in found.items():
        assert len({i for i, _ in seen}) == 1, f"helpers named {name} take the slug at different places"
        severities = {sev for _, sev in seen}
        out[name] = (next(iter(seen))[0], severities.pop() if len(severities) == 1 else None)
    return out


def _call_uses(call: ast.Call, helpers: dict[str, tuple[int, str | None]], where: str) -> Iterator[Use]:
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in NOT_HELPERS:
        return
    if name in helpers:
        i, severity = helpers[name]
        arg = call.args[i] if len(call.args) > i else next((k.value for k in call.keywords if k.arg == "slug"), None)
        sev = next((k.value for k in call.keywords if k.arg == "severity"), None)
        if sev is not None:
            severity = _literal(sev)
        if (slug := _literal(arg)) is not None:
            yield Use(slug, where, True, severity)
    elif name == "get" and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Dict) and call.args \
            and _is_slug(call.args[0]):  # {slug: hint}.get(exc.slug, ...)
        yield from (Use(s, where, False) for s in map(_literal, f.value.keys) if s is not None)


def _is_slug(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "slug") or (isinstance(node, ast.Attribute)
                                                                  and node.attr == "slug")


def _tuple_slugs(node: ast.AST | None) -> list[str]:
    """The slugs of a ``(slug, ...)`` tuple, or of both branches of ``a if c else b``."""
    if isinstance(node, ast.IfExp):
        return _tuple_slugs(node.body) + _tuple_slugs(node.orelse)
    first = _literal(node.elts[0]) if isinstance(node, ast.Tuple) and node.elts else None
    return [first] if first is not None else []


def _assign_uses(node: ast.Assign, where: str) -> Iterator[Use]:
    for target in node.targets:
        if isinstance(target, ast.Name) and target.id in SLUG_TUPLES[0]:
            yield from (Use(s, where, True) for s in _tuple_slugs(node.value))
        pairs = list(zip(target.elts, node.value.elts)) if isinstance(target, ast.Tuple) \
            and isinstance(node.value, ast.Tuple) else [(target, node.value)]
        values = {t.attr: v for t, v in pairs if isinstance(t, ast.Attribute)}
        if "slug" in values and (s := _literal(values["slug"])):  # p.slug, p.severity = "x", "warning"
            yield Use(s, where, True, _literal(values.get("severity")))


def _other_uses(node: ast.AST, where: str) -> Iterator[Use]:
    """Slugs compared with a problem's slug, or keys of a dict indexed by one."""
    if isinstance(node, ast.Compare) and _is_slug(node.left):
        for c in node.comparators:
            items = c.elts if isinstance(c, (ast.Tuple, ast.List, ast.Set)) else [c]
            yield from (Use(s, where, False) for s in map(_literal, items) if s is not None)
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Dict) and _is_slug(node.slice):
        yield from (Use(s, where, False) for s in map(_literal, node.value.keys) if s is not None)


def _uses(sources: list[tuple[str, ast.Module]]) -> list[Use]:
    """Every slug literal of ``sources`` (path, parsed module) and how it is used."""
    helpers = _helpers(sources)
    out: list[Use] = []
    for path, tree in sources:
        if Path(path).name in NOT_EMITTERS:
            continue
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in SLUG_TUPLES[1]):
            out += [Use(s, f"{path}:{r.lineno}", True) for r in ast.walk(fn) if isinstance(r, ast.Return)
                    for s in _tuple_slugs(r.value)]
        for node in ast.walk(tree):
            where = f"{path}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call):
                out += _call_uses(node, helpers, where)
            elif isinstance(node, ast.Assign):
                out += _assign_uses(node, where)
            out += _other_uses(node, where)
    return out


@pytest.fixture(scope="module")
def uses() -> list[Use]:
    return _uses(_sources())


SAMPLE = """
import warnings

class FrameError(Exception):
    def __init__(self, slug, message):
        self.slug = slug

def bad(slug, msg):
    return Problem(slug, msg, severity="warning")

def f(p, exc):
    Problem("a_slug", "m")
    Problem("b_slug", "m", severity="warning")
    bad("c_slug", "m")
    bad(slug="c2_slug", msg="m", severity="error")
    raise FrameError("d_slug", "m")
    problem = ("e_slug", "message")
    p.slug, p.severity = "f_slug", "warning"
    if p.slug in ("g_slug", "h_slug") or exc.slug == "i_slug":
        warnings.warn("not_a_slug")
    other = ("not_a_slug", "message")
    return {"j_slug": "hint"}.get(exc.slug, "hint")

def _frame_header(ok):
    return ("k_slug", None) if ok else ("k2_slug", None)
"""


def test_the_scanner_reads_each_route() -> None:
    got = sorted((u.slug, u.where, u.emits, u.severity) for u in _uses([("core/sample.py", ast.parse(SAMPLE))]))
    assert got == [("a_slug", "core/sample.py:12", True, "error"), ("b_slug", "core/sample.py:13", True, "warning"),
                   ("c2_slug", "core/sample.py:15", True, "error"), ("c_slug", "core/sample.py:14", True, "warning"),
                   ("d_slug", "core/sample.py:16", True, None), ("e_slug", "core/sample.py:17", True, None),
                   ("f_slug", "core/sample.py:18", True, "warning"), ("g_slug", "core/sample.py:19", False, None),
                   ("h_slug", "core/sample.py:19", False, None), ("i_slug", "core/sample.py:19", False, None),
                   ("j_slug", "core/sample.py:22", False, None), ("k2_slug", "core/sample.py:25", True, None),
                   ("k_slug", "core/sample.py:25", True, None)]


def test_every_slug_in_the_code_is_declared(uses: list[Use]) -> None:
    unknown = sorted(f"{u.slug!r} at {u.where}" for u in uses if u.slug not in CATALOGUE)
    assert not unknown, "declare these in core/problems.py: " + "; ".join(unknown)


def test_every_declared_slug_is_emitted(uses: list[Use]) -> None:
    dead = sorted(set(CATALOGUE) - {u.slug for u in uses if u.emits})
    assert not dead, (f"declared in core/problems.py but made nowhere: {dead} (remove them, or teach "
                      "tests/test_problems.py how the code now passes them)")


def test_severities_at_call_sites_are_declared(uses: list[Use]) -> None:
    wrong = sorted(f"{u.slug} as {u.severity} at {u.where}" for u in uses if u.emits and u.severity
                   and u.slug in CATALOGUE and u.severity not in CATALOGUE[u.slug].severities)
    assert not wrong, "severity not declared in core/problems.py: " + "; ".join(wrong)


def test_docs_page_is_generated() -> None:
    committed = (ROOT / "docs" / "problems.md").read_text(encoding="utf-8")
    assert committed == markdown(), f"docs/problems.md is out of date: run `{REGENERATE}`"


def test_the_regenerate_command_prints_the_page() -> None:
    done = subprocess.run([sys.executable, "-m", "trajcheck.problems"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")  # no runpy warning: the module was not imported early
    assert done.stdout == markdown()


def test_page_has_one_row_per_slug_under_its_section() -> None:
    page = markdown()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) == len(CATALOGUE) == sum(len(kinds) for _, kinds in SECTIONS)  # no slug declared twice
    assert [line[3:] for line in page.splitlines() if line.startswith("## ")] == [t for t, _ in SECTIONS]
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
    assert str(exc.value) == ("unknown problem slug 'no_such_slug': declare it in core/problems.py "
                              "(trajcheck.problems), then run `python -m trajcheck.problems > docs/problems.md`")


def test_relabelling_to_an_unknown_slug_raises() -> None:
    p = Problem("json_invalid", "not valid JSON", hint="h")
    p.slug = "contract_invalid"  # as contracts.py does
    assert str(p) == "not valid JSON (hint: h) [contract_invalid]"
    with pytest.raises(ValueError, match="'contract_invald'"):
        p.slug = "contract_invald"
    assert p.slug == "contract_invalid"


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
