"""Finding and reading outcome contracts and their reference images."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analyzers.rubric import tree_problems
from ..base.errors import Problem, RunFormatError
from ..base.problems import Slug
from ..base.inputs import NotRegularFile, exists_not_dir, read_regular
from ..base.jsonio import decode_utf8, parse_json_text
from ..readers.rundir import valid_fast, validator
from ..base.runfiles import safe_join


@dataclass(frozen=True)
class LoadedContract:
    data: dict[str, Any]
    base: Path  # references resolve inside this directory
    source: str  # where it came from, for messages


def find_contract(run_dir: Path, task_id: str | None, contracts_dir: Path | None, run: str
                  ) -> tuple[LoadedContract | None, list[Problem]]:
    """The run's ``contract.json``, else ``contracts_dir/<task_id>.json``; None when neither exists."""
    candidates = [(run_dir / "contract.json", run_dir, "contract.json")]
    if contracts_dir is not None and task_id:
        by_task = safe_join(contracts_dir, f"{task_id}.json")
        if by_task is not None:
            candidates.append((by_task, contracts_dir, str(by_task)))
    for path, base, label in candidates:
        if not exists_not_dir(path):
            continue
        if base == run_dir and safe_join(run_dir, "contract.json") is None:  # the rule every run file follows
            raise RunFormatError([Problem(Slug.PATH_ESCAPES_RUN, "contract.json is a link to a file outside the run "
                                          "directory; it is not read", run=run, file=label,
                                          hint="copy the contract into the run directory instead of linking it")])
        problems: list[Problem] = []
        try:
            raw = read_regular(path)
        except NotRegularFile as exc:
            return None, [Problem(Slug.NOT_A_REGULAR_FILE, f"{exc.kind}, not a regular file; it is never opened",
                                  run=run, file=label, severity="warning",
                                  hint="the run is scored without a contract")]
        except OSError as exc:
            return None, [Problem(Slug.CONTRACT_INVALID, f"cannot read: {exc}", run=run, file=label, severity="warning",
                                  hint="the run is scored without a contract")]
        text, p = decode_utf8(raw, run=run, file=label)
        if p:
            p.slug, p.severity = Slug.CONTRACT_INVALID, "warning"
            return None, [p]
        data, p = parse_json_text(text or "", run=run, file=label)
        if p and p.slug == Slug.VALUE_OUT_OF_RANGE and base == run_dir:  # NaN or 1e999 in a run's own file
            raise RunFormatError([p])
        if p:
            p.slug, p.severity = Slug.CONTRACT_INVALID, "warning"
            return None, [p]
        errors = [] if valid_fast("contract", data) else validator("contract").iter_errors(data)
        for err in errors:
            field = ".".join(str(x) for x in err.absolute_path) or "(contract)"
            problems.append(Problem(Slug.CONTRACT_INVALID, err.message[:160], run=run, file=label, field=field,
                                    severity="warning", hint="see the contract format in docs/referee.md; "
                                    "the run is scored without a contract"))
        if not problems:  # the rubric's names, once the shape is right
            problems = [Problem(Slug.CONTRACT_INVALID, msg, run=run, file=label, field=where, severity="warning",
                                hint="see Rubric trees in docs/referee.md; the run is scored without a contract")
                        for where, msg in tree_problems(data)]
        if problems:
            return None, problems
        return LoadedContract(data, base, label), []
    return None, []


def reference_paths(contract: dict[str, Any]) -> list[str]:
    """Every image the contract refers to, in a stable order."""
    out: list[str] = []
    for c in contract.get("checks", []):
        if c.get("type") == "region_matches" and c["reference"] not in out:
            out.append(c["reference"])
    for r in contract.get("reference_screenshots", []) or []:
        if r not in out:
            out.append(r)
    return out
