"""What every command shares: the options declared once (cli/options.py) and the one path from an error
to a message and an exit code (cli/exits.py)."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

import trajcheck
from trajcheck.analyzers.effect_options import DEFAULT_THRESHOLD
from trajcheck.api import NoRunsFound, ScoreResult
from trajcheck.cli.common import Exit
from trajcheck.cli.exits import RULES, ExitOutcome, ExitRule, codes_of, exit_on_error, help_line
from trajcheck.cli.main import COMMANDS, app, command
from trajcheck.base.errors import LedgerError, Problem, QueryError, RunFormatError, UsageError
from trajcheck.store.lock import DEFAULT_WAIT, LedgerBusy

from conftest import SAMPLES

runner = CliRunner()
CLICK = get_command(app)

#: Each command's --format choices, in the order its help lists them.
FORMATS = {
    "score": ["table", "json", "csv"], "validate": ["table", "json", "csv"], "query": ["table", "json", "csv"],
    "formats": ["table", "json", "csv"], "best-of": ["table", "json", "csv"], "compare": ["table", "json", "csv"],
    "agree": ["table", "json", "csv"], "columns": ["table", "json", "csv", "md"], "timeline": ["text", "json"],
    "export": ["md", "csv", "latex", "html", "json"], "report": ["table", "json", "csv"],
    "compact": ["table", "json", "csv"], "diff": ["table", "json", "csv"],
    "check": ["table", "json", "csv", "md", "junit"], "draft-contract": ["table", "json", "csv"],
    "draft-mapping": ["toml", "json"], "failures": ["table", "json", "csv", "md"],
    "judges": ["table", "json", "csv", "md"],
    "flaky": ["table", "json", "csv"], "redo": ["text", "json", "csv"],
}
#: Arguments that make each command valid apart from its --format (a missing ledger is only seen later).
ARGS = {
    "score": ["nowhere"], "validate": ["nowhere"], "query": ["L", "select 1"], "formats": [], "best-of": ["L"],
    "compare": ["L"], "agree": ["L", "--labels", "x.json"], "columns": [], "timeline": ["L", "run"], "export": ["L"],
    "report": ["L"], "compact": ["L"], "diff": ["L", "a", "b"], "check": ["L", "--min-success", "0.5"],
    "draft-contract": ["L", "run"],
    "draft-mapping": ["nowhere"],
    "failures": ["L"],
    "judges": ["L"],
    "flaky": ["L"], "redo": ["L"],
}
LEDGER_COMMANDS = ["query", "timeline", "best-of", "compare", "agree", "export", "report", "compact", "diff", "check",
                   "draft-contract", "failures", "judges", "flaky", "redo"]


def _param(command: str, name: str):
    return next(p for p in CLICK.commands[command].params if p.name == name)


def test_every_command_is_listed_here():
    assert sorted(CLICK.commands) == sorted(FORMATS)


@pytest.mark.parametrize("command", sorted(FORMATS))
def test_format_choices_and_help_come_from_one_declaration(command):
    opt = _param(command, "fmt")
    assert sorted(opt.opts) == ["--format", "-f"]
    choices = FORMATS[command]
    assert list(opt.type.choices) == choices
    assert opt.help == "Output: " + ", ".join(choices[:-1]) + " or " + choices[-1] + "."


@pytest.mark.parametrize("command", sorted(FORMATS))
def test_a_bad_format_is_exit_2_naming_the_choices(command):
    res = runner.invoke(app, [command, *ARGS[command], "--format", "xml"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.stderr.replace("│", " ").split())
    assert "Invalid value for '--format' / '-f': 'xml' is not one of " in text
    assert ", ".join(f"'{c}'" for c in FORMATS[command]) + "." in text


@pytest.mark.slow
def test_every_format_is_accepted_by_the_ledger_commands(sample_ledger):
    calls = {"query": [str(sample_ledger), "select count(*) as n from runs"],
             "best-of": [str(sample_ledger)], "compare": [str(sample_ledger), "--by", "config.perceptual_verifier"],
             "agree": [str(sample_ledger), "--labels", str(SAMPLES / "labels.json")],
             "timeline": [str(sample_ledger), "drift-loop-off"], "export": [str(sample_ledger)],
             "diff": [str(sample_ledger), "drift-loop-off", "drift-loop-on"],
             "columns": ["--table", "runs"], "formats": [],
             "failures": [str(sample_ledger), "--by", "config.perceptual_verifier"]}
    for command, args in calls.items():
        for fmt in FORMATS[command]:
            res = runner.invoke(app, [command, *args, "-f", fmt])
            assert res.exit_code == 0 and res.stdout, (command, fmt, res.output)
            if fmt == "json":
                json.loads(res.stdout)


def test_the_ledger_argument_is_declared_once():
    for command in [c for c in LEDGER_COMMANDS if c != "compare"]:  # compare takes one or two ledgers
        arg = next(p for p in CLICK.commands[command].params if p.name == "ledger_dir")
        assert (arg.metavar, arg.help, arg.required) == ("LEDGER", "Ledger directory written by `score`.", True)
    assert _param("score", "quiet").opts == ["--quiet", "-q"]
    assert _param("score", "wait").help == _param("compact", "wait").help
    assert _param("score", "mapping").help == _param("validate", "mapping").help


@pytest.mark.slow
def test_a_command_loads_its_own_module_only(tmp_path):
    """The app imports a command's module when the command is looked up: `score` loads none of the other
    commands' modules (nor click, nor with --quiet rich.progress), and help lists every command in order."""
    import subprocess
    import sys

    argv = ["trajcheck", "score", str(SAMPLES / "captcha-blocked"), "--out", str(tmp_path), "-q"]
    code = (f"import sys\nfrom trajcheck.cli.main import main\nsys.argv = {argv!r}\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print(code, sorted(m for m in sys.modules if m.startswith('trajcheck.cli.') or m in "
            "('click', 'rich.progress')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.splitlines()[-1] == "0 ['trajcheck.cli.common', 'trajcheck.cli.exits', 'trajcheck.cli.main', " \
                                          "'trajcheck.cli.options', 'trajcheck.cli.score']", out.stdout + out.stderr
    res = runner.invoke(app, ["--help"])
    # a command's name starts its line; a wrapped line of help is indented (and may start with a command's name)
    listed = [line.split()[1] for line in res.stdout.splitlines() if line.startswith("│ ") and line[2] != " "
              and line.split()[1] in COMMANDS]
    assert res.exit_code == 0 and listed == list(COMMANDS)


def test_every_command_runs_under_the_one_error_path():
    for name in COMMANDS:
        rules = command(name).exit_rules
        assert rules[len(rules) - len(RULES):] == RULES, name


#: The codes each command exits with, written out here apart from the declarations they are checked against
#: (every command exits 2 on a bad option, as click does before the command runs).
EXIT_CODES = {
    "score": [0, 1, 2, 3, 4], "validate": [0, 1, 2, 3], "query": [0, 2, 3], "columns": [0, 2], "formats": [0, 2],
    "timeline": [0, 2, 3], "compare": [0, 2, 3], "agree": [0, 2, 3], "export": [0, 2, 3], "report": [0, 2, 3, 4],
    "best-of": [0, 2, 3], "compact": [0, 2, 3, 4], "diff": [0, 2, 3], "check": [0, 1, 2, 3],
    "draft-contract": [0, 2, 3],
    "draft-mapping": [0, 1, 2, 3],
    "failures": [0, 2, 3],
    "judges": [0, 2, 3],
    "flaky": [0, 2, 3], "redo": [0, 2, 3],
}


def _exit_paragraph(help_text: str) -> str:
    """The "Exit codes:" paragraph of a rendered --help, its lines joined (rich wraps it to the terminal)."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Exit codes:"))
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return " ".join(" ".join(lines[start:end]).split())


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_lists_exactly_the_exit_codes_of_the_command(name):
    res = runner.invoke(app, [name, "--help"])
    assert res.exit_code == 0, res.output
    paragraph = _exit_paragraph(res.stdout)
    listed = [int(c) for c in re.findall(r"(?:^Exit codes: |; )(\d) ", paragraph)]
    assert listed == EXIT_CODES[name] == [int(c) for c in codes_of(command(name))], paragraph
    assert paragraph == help_line(codes_of(command(name)))  # the words of the rules and outcomes, whole
    assert res.stdout.count("Exit codes:") == 1
    assert f"Example: trajcheck {name} " in " ".join(res.stdout.split())  # the hand-written example is kept
    written = inspect.getdoc(command(name).__wrapped__) or ""
    assert "Exit codes" not in written, "the exit codes are generated: remove them from the docstring"


def test_the_help_line_is_made_from_rules_raised_errors_and_outcomes():
    @exit_on_error(ExitRule(OSError, Exit.INPUT, "cannot write: {error}", means="the file cannot be written"),
                   ExitOutcome(Exit.FINDINGS, "something was found"), ExitOutcome(Exit.USAGE, "no such thing"),
                   raises=(LedgerBusy, LedgerError))
    def made(target: str = "out.txt") -> None:
        """Do a thing.

        Example: trajcheck made
        """

    assert made.__doc__ == (
        "Do a thing.\n\nExample: trajcheck made\n\nExit codes: 0 done; 1 something was found; "
        "2 bad options or arguments, or no such thing; 3 the ledger cannot be read, or the file cannot be "
        "written; 4 another writer held the ledger for longer than --wait (nothing was written).")
    # a command's own 0 replaces "done"; a shared error it does not raise is not listed
    quiet = exit_on_error(ExitOutcome(Exit.OK, "all went well"))(lambda: None)
    assert codes_of(quiet) == {Exit.OK: ("all went well",), Exit.USAGE: ("bad options or arguments",)}


def test_a_rule_without_meaning_or_an_error_without_rule_is_refused():
    with pytest.raises(ValueError, match="OSError"):
        exit_on_error(ExitRule(OSError, Exit.INPUT, "cannot write: {error}"))
    with pytest.raises(ValueError, match="KeyError"):
        exit_on_error(raises=(KeyError,))


def test_an_unreadable_ledger_is_exit_3_and_one_line_in_every_command(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text("{garbage")
    with pytest.raises(LedgerError) as info:
        trajcheck.connect(bad)
    why = str(info.value)
    assert why.startswith(f"{bad}/manifest.json: unreadable ledger manifest (")
    calls = {"query": ["select 1"], "timeline": ["run"], "best-of": [], "compare": ["--by", "task_id"],
             "agree": ["--labels", str(SAMPLES / "labels.json")], "export": [],
             "report": ["--out", str(tmp_path / "report")], "compact": [], "diff": ["a", "b"],
             "check": ["--min-success", "0.5"], "failures": []}
    prefix = {"compact": "cannot compact the ledger: "}
    for command, args in calls.items():
        res = runner.invoke(app, [command, str(bad), *args])
        assert (res.exit_code, res.stdout, res.stderr.splitlines()) == \
               (3, "", [f"error: {prefix.get(command, '')}{why}"]), command
    res = runner.invoke(app, ["score", str(SAMPLES / "captcha-blocked"), "--out", str(bad), "-q"])
    assert (res.exit_code, res.stdout, res.stderr.splitlines()) == (3, "", [f"error: cannot write the ledger: {why}"])


def _run(exc: BaseException, *own: ExitRule) -> "typer.testing.Result":
    """Invoke a one-command app, named boom, whose command raises ``exc``."""
    one = typer.Typer()

    @one.command()
    @exit_on_error(*own)
    def boom(target: str = "out.txt") -> None:
        """Raise."""
        raise exc

    @one.callback()
    def _root() -> None:  # a group, so that the command is invoked by its name
        pass

    return runner.invoke(one, ["boom"])


def test_each_domain_error_has_its_exit_code_message_and_hint():
    gone = Problem("path_not_found", "nowhere does not exist", run="nowhere")
    cases = [
        (UsageError("unknown engine 'spark'"), Exit.USAGE, ["error: unknown engine 'spark'"]),
        (LedgerError("L: no such ledger directory"), Exit.INPUT, ["error: L: no such ledger directory"]),
        (LedgerBusy(Path("L"), None, 3.2), Exit.LOCKED,
         ["error: L is being written by another writer; gave up after 3s",
          "hint: nothing was written; boom again when it is done, or raise --wait"]),
        (QueryError("Catalog Error"), Exit.INPUT,
         ["error: query failed: Catalog Error", "hint: the views are `runs` and `steps`; `trajcheck columns` lists them"]),
        (NoRunsFound("no runs found", [gone]), Exit.INPUT,
         [f"error: {gone}", "error: no runs found",
          "hint: pass run directories (holding run.json) or folders that contain them"]),
        (RunFormatError([gone]), Exit.INPUT, [f"error: {gone}"]),
    ]
    for exc, code, lines in cases:
        res = _run(exc)
        assert (res.exit_code, res.stdout, res.stderr.splitlines()) == (int(code), "", lines), type(exc).__name__


def test_an_error_no_rule_names_is_a_bug_and_keeps_its_traceback():
    res = _run(ValueError("a bug"))
    assert res.exit_code == 1 and isinstance(res.exception, ValueError)
    res = _run(OSError("disk full"))
    assert isinstance(res.exception, OSError)


def test_a_command_rule_rewords_its_class_and_the_subclass_rules_still_win():
    own = (ExitRule(LedgerError, Exit.INPUT, "cannot write the ledger: {error}", means="the ledger cannot be written"),
           ExitRule(OSError, Exit.INPUT, lambda exc, params: f"cannot write {params['target']}: {exc}",
                means="the target cannot be written"))
    res = _run(LedgerError("L: unreadable"), *own)
    assert (res.exit_code, res.stderr) == (3, "error: cannot write the ledger: L: unreadable\n")
    res = _run(LedgerBusy(Path("L"), None, 1), *own)  # LedgerBusy's own shared rule is more specific
    assert res.exit_code == 4 and res.stderr.startswith("error: L is being written by another writer;")
    res = _run(FileNotFoundError(2, "No such file or directory"), *own)  # a subclass of OSError
    assert (res.exit_code, res.stderr) == (3, "error: cannot write out.txt: [Errno 2] No such file or directory\n")


def test_the_score_command_is_one_library_call_then_rendering(monkeypatch, tmp_path):
    """The command passes every option of trajcheck.score through, by name, and prints its result."""
    calls: list[tuple[tuple, dict]] = []
    rows = [{"run_id": "a", "source_format": "ui-tars", "status": "ok", "n_steps": 3, "effect_checked": 1, "effect_no_effect": 0,
             "effect_no_effect_seed": 0, "warnings": [], "outcome_status": "done", "eval_final_verdict": "fail",
             "false_claim": True},
            {"run_id": "b", "source_format": "trajcheck.run/1", "status": "invalid", "n_steps": None, "effect_checked": None, "effect_no_effect": None,
             "effect_no_effect_seed": None, "warnings": None, "outcome_status": None}]

    def fake(*args, **options):
        calls.append((args, options))
        return ScoreResult(Path("L"), 3, 2, 10, 4.0, rows, [{"error": "run b: broken [run_json_invalid]"}], ["c"])

    monkeypatch.setattr(trajcheck.api, "score", fake)
    res = runner.invoke(app, ["score", "runs/", "--out", "L", "--format", "json", "-q"])
    assert res.exit_code == 1
    [(args, options)] = calls
    assert args == (["runs/"], Path("L"))
    library = set(inspect.signature(trajcheck.score).parameters) - {"paths", "out"}
    assert set(options) == library
    assert (options["engine"], options["threshold"], options["wait"], options["mapping"], options["jobs"]) == \
           ("local", DEFAULT_THRESHOLD, DEFAULT_WAIT, None, None)
    assert json.loads(res.stdout) == fake().to_json()  # exactly the library's result
    assert json.loads(res.stdout)["runs"] == rows
    assert res.stderr.splitlines() == [
        "scored 2 runs (1 invalid), 10 frames in 4.00s (2.5 frames/s), 1 unchanged run skipped "
        "(--force rescores them) -> L (generation 3)",
        "read by: ui-tars 1, trajcheck.run/1 1",
        "verdicts: 1 fail; 1 false claim",
        "verdict for 1 of 1 run",  # the fake row names no verdict source
        "invalid: run b: broken [run_json_invalid]",
    ]


def test_scores_options_are_declared_once_for_the_command_the_library_and_the_pipeline(tmp_path):
    """Every field of ScoreArgs is an option of `trajcheck score` (its flags, help and default) and a keyword of
    trajcheck.score; nothing else is; a mode with fixed values is a StrEnum whose values are the choices."""
    import dataclasses
    from enum import StrEnum

    from trajcheck.base.errors import UsageError
    from trajcheck.scoring import scoreargs

    declared = {f.name: f for f in dataclasses.fields(scoreargs.ScoreArgs)}
    command = {p.name: p for p in CLICK.commands["score"].params}  # type: ignore[attr-defined]
    assert set(command) == set(declared) | {"runs", "out", "expect", "fmt", "quiet"}
    for name, f in declared.items():
        flag = f.metadata["flag"]
        param = command[name]
        assert param.help == flag.help and set(flag.names[0].split("/")) <= set(param.opts + param.secondary_opts)
        default = f.default.value if isinstance(f.default, StrEnum) else f.default
        assert param.default in (default, f.default) or (f.default == () and param.default is None), name
    library = set(inspect.signature(trajcheck.score).parameters) - {"paths", "out", "expect", "on_found",
                                                                    "on_result", "on_wait"}
    assert library == set(declared)
    assert [c for c in command["ocr"].type.choices] == [m.value for m in scoreargs.OcrMode]
    with pytest.raises(UsageError, match="unknown option verfier"):
        trajcheck.score([SAMPLES], out=tmp_path / "L", verfier=False)
    assert not (tmp_path / "L").exists()
