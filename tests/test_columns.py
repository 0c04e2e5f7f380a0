"""Columns with their sources: every declared column is produced, nothing undeclared is, and every source
names something that exists (a findings attribute, a conversion, a named function)."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import SAMPLES
from trajcheck.scoring import rows
from trajcheck.scoring.analysis import StepFindings
from trajcheck.scoring.pipeline import score_paths
from trajcheck.schemas.ledger import RUNS, STEPS, Column


@pytest.fixture(scope="module")
def scored():
    """Every sample run, scored: contracts, judges, DOM snapshots, loops, invalid frames and all."""
    return score_paths([SAMPLES], jobs=1).results


def _roots(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize(("table", "columns", "roots", "functions"), [
    ("steps", STEPS, _roots(StepFindings), rows.STEP_FUNCTIONS),
    ("runs", RUNS, _roots(rows.RunFacts), rows.RUN_FUNCTIONS),
])
def test_every_source_names_something_that_exists(table: str, columns: tuple[Column, ...], roots: set[str],
                                                   functions: dict) -> None:
    used = set()
    for c in columns:
        assert c.source, f"{table}.{c.name} declares no source"
        if c.source == "late":
            continue
        if c.source.startswith("analyzer:"):
            assert callable(rows.analyzer_function(c.source[len("analyzer:"):])), f"{table}.{c.name}"
            continue
        if c.source.startswith("fn:"):
            assert c.source[3:] in functions, f"{table}.{c.name}: no function {c.source[3:]!r} in trajcheck.scoring.rows"
            used.add(c.source[3:])
            continue
        path, _, conv = c.source.partition("|")
        assert path.split(".")[0] in roots, f"{table}.{c.name}: {path!r} starts outside {sorted(roots)}"
        assert not conv or conv in rows.CONVERT, f"{table}.{c.name}: unknown conversion {conv!r}"
    assert set(functions) == used, f"functions no {table} column uses: {sorted(set(functions) - used)}"


def test_rows_have_exactly_the_declared_columns(scored) -> None:
    ok = [r for r in scored if r.ok]
    assert len(ok) >= 20 and sum(len(r.steps) for r in ok) >= 100  # the whole sample set, not a corner of it
    for r in ok:
        assert list(r.run) == [c.name for c in RUNS], r.run["run_id"]
        for s in r.steps:
            assert list(s) == [c.name for c in STEPS], (r.run["run_id"], s["step_index"])


def test_late_columns_are_filled_by_the_scorer(scored) -> None:
    late = [c.name for c in RUNS if c.source == "late"]
    assert late == ["input_digest", "inputs"]
    for r in scored:
        assert all(isinstance(r.run[n], str) and r.run[n] for n in late), r.run["run_id"]


def test_a_path_through_a_missing_part_gives_null_and_a_typo_raises() -> None:
    get = rows._path_getter("step.page.url_before")

    class Step:
        page = None

    class Findings:
        step = Step()

    assert get(Findings()) is None
    with pytest.raises(AttributeError):
        rows._path_getter("step.pgae.url_before")(Findings())
    totals = type("Facts", (), {"totals": {"effect_checked": 3}})()
    assert rows._path_getter("totals.effect_checked")(totals) == 3
    with pytest.raises(KeyError):
        rows._path_getter("totals.efect_checked")(totals)  # a misspelt key of the run totals raises too


def test_conversions() -> None:
    assert rows.CONVERT["list"](None) == [] and rows.CONVERT["list"](("a",)) == ["a"]
    assert rows.CONVERT["box"](None) is None and rows.CONVERT["box"]((1, 2, 3, 4)) == [1, 2, 3, 4]
    assert rows.CONVERT["json"]({}) is None and rows.CONVERT["json"]({"b": 1, "a": "é"}) == '{"a": "é", "b": 1}'
    assert rows.CONVERT["str"](None) is None


def test_an_analyzer_source_names_a_function_of_the_findings() -> None:
    """A column computed by an analyzer from the other findings is declared by naming the function."""
    from types import SimpleNamespace

    fn = rows.analyzer_function("perceptual.agrees_with_recorded")
    step = SimpleNamespace(recorded_effect=True)
    assert fn(SimpleNamespace(step=step, effect=SimpleNamespace(action_effect_observed=True))) is True
    assert fn(SimpleNamespace(step=step, effect=SimpleNamespace(action_effect_observed=False))) is False
    assert fn(SimpleNamespace(step=SimpleNamespace(recorded_effect=None),
                              effect=SimpleNamespace(action_effect_observed=False))) is None
    with pytest.raises(ValueError, match="no function nope in trajcheck.analyzers.perceptual"):
        rows.analyzer_function("perceptual.nope")


#: What the runs rows add to a run's findings: nothing else is declared twice.
ROW_ONLY = {"ref", "step_rows", "n_frames", "problems", "totals"}


def test_a_runs_findings_are_declared_once_and_the_rows_add_only_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """RunFacts is RunFindings plus the rows' own fields: a new finding is one field of RunFindings (analyzer,
    findings record, column declaration, migration: no edit of the row builder), and nothing is typed Any."""
    import typing

    from trajcheck.scoring import analysis
    from trajcheck.scoring.pipeline import score_paths

    assert issubclass(rows.RunFacts, analysis.RunFindings)
    found = {f.name for f in dataclasses.fields(analysis.RunFindings)}
    assert {f.name for f in dataclasses.fields(rows.RunFacts)} == found | ROW_ONLY
    hints = typing.get_type_hints(rows.RunFacts)
    assert [n for n, t in hints.items() if t is typing.Any] == []
    with pytest.raises(TypeError):  # built by keyword only
        analysis.RunFindings(*[None] * len(found))  # type: ignore[misc]

    seen: list[tuple[analysis.RunFindings, rows.RunFacts]] = []
    build = rows.build_result

    def spy(f, ref, n_frames, problems):
        result = build(f, ref, n_frames, problems)
        seen.append((f, rows.RunFacts.of(f, ref, result.steps, n_frames, problems)))
        return result

    from trajcheck.scoring import scorerun

    from conftest import SAMPLES

    monkeypatch.setattr(scorerun, "build_result", spy)
    score_paths([SAMPLES / "terms-checkbox-off"], jobs=1)
    (f, facts), = seen
    assert all(getattr(facts, name) is getattr(f, name) for name in found)
