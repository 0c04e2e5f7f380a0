"""One path from an error to a message and an exit code: every command runs under :func:`exit_on_error`.

The library raises domain errors (:mod:`trajcheck.base.errors`) and never exits; here each kind of error gets
its exit code (the README's "Exit codes"), a one-line message on stderr and, where there is one, a hint.
The most specific rule wins (a class's own rule before its base's), so a command may re-word one kind
(`score` says "cannot write the ledger: ...") or handle one more (`report` makes an OSError exit 3)::

    @exit_on_error(ExitRule(OSError, Exit.INPUT, "cannot write the report: {error}", means="the report cannot be
                        written"), raises=(LedgerError,))
    def report(...) -> None: ...

The same declarations write the "Exit codes:" line of the command's help: each rule says in a few words
when it applies (``means``); a command names the shared errors its library call raises (``raises``; every
command exits 2 on a bad option, as click does before it runs) and the exits it makes itself
(:class:`ExitOutcome`: `score`'s 1 for invalid runs). ``python -m devtools.exitdoc`` writes the README's
table from every command's.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar, Union, cast

from ..api import NoRunsFound
from ..base.errors import LedgerError, QueryError, RunFormatError, UsageError
from ..store.lock import LedgerBusy

from .common import Exit, fail, print_problems

#: A message template (``str.format`` fields ``error`` and ``command``) or a function of the error and the
#: command's parameters, for a message that names one of them.
Message = Union[str, Callable[[BaseException, Mapping[str, Any]], str]]


@dataclass(frozen=True)
class ExitRule:
    """How one kind of error ends a command."""

    error: type[BaseException]
    code: Exit
    message: Message = "{error}"
    hint: str | None = None  # ``str.format`` field ``command``
    problems: bool = False  # print the error's ``problems`` first, one line each
    means: str = ""  # when it applies, in the help's "Exit codes:" line ("the ledger cannot be read")

    def text(self, exc: BaseException, command: str, params: Mapping[str, Any]) -> str:
        """The error line's text for ``exc`` raised by ``command`` called with ``params``."""
        if callable(self.message):
            return self.message(exc, params)
        return self.message.format(error=exc, command=command)


@dataclass(frozen=True)
class ExitOutcome:
    """An exit a command makes itself, not for an error (`score`'s 1: some runs are invalid), or one more
    case of an error's code worth naming in its help (`timeline`'s 2: no such run)."""

    code: Exit
    means: str


#: The rules every command shares. LedgerBusy is a LedgerError: its own rule wins for it.
RULES: tuple[ExitRule, ...] = (
    ExitRule(UsageError, Exit.USAGE, means="bad options or arguments"),
    ExitRule(LedgerError, Exit.INPUT, means="the ledger cannot be read"),
    ExitRule(LedgerBusy, Exit.LOCKED, hint="nothing was written; {command} again when it is done, or raise --wait",
         means="another writer held the ledger for longer than --wait (nothing was written)"),
    ExitRule(QueryError, Exit.INPUT, "query failed: {error}",
         "the views are `runs` and `steps`; `trajcheck columns` lists them", means="the SQL fails"),
    ExitRule(NoRunsFound, Exit.INPUT, hint="pass run directories (holding run.json) or folders that contain them",
         problems=True, means="no runs found (the folders no reader claims are named)"),
    ExitRule(RunFormatError, Exit.INPUT, means="a run cannot be read"),
)

#: What a command's 0 means unless it says (an ExitOutcome of code 0).
DONE = ExitOutcome(Exit.OK, "done")

F = TypeVar("F", bound=Callable[..., None])


def rule_for(exc: BaseException | type[BaseException], rules: tuple[ExitRule, ...] = RULES) -> ExitRule | None:
    """The rule for ``exc`` (an error or its class): the first rule naming its class, else its nearest base
    class's; None if none."""
    for cls in (exc if isinstance(exc, type) else type(exc)).__mro__:
        for rule in rules:
            if rule.error is cls:
                return rule
    return None


def exit_codes(rules: tuple[ExitRule, ...], raises: tuple[type[BaseException], ...],
               outcomes: tuple[ExitOutcome, ...]) -> dict[Exit, tuple[str, ...]]:
    """Each code a command exits with, in order, and what it means: the rules of the errors it raises (its
    own rules' errors, ``raises`` and UsageError, whose 2 click also gives a bad option), then its outcomes,
    and :data:`DONE` for a 0 it does not explain."""
    own = len(rules) - len(RULES)
    raised: list[type[BaseException]] = [UsageError, *(r.error for r in rules[:own]), *raises]
    applied = {rule_for(cls, rules) for cls in raised}
    cases = [(r.code, r.means) for r in (*rules[own:], *rules[:own]) if r in applied]  # the shared first
    cases += [(o.code, o.means) for o in outcomes]
    if not any(code is Exit.OK for code, _ in cases):
        cases.append((DONE.code, DONE.means))
    means: dict[Exit, list[str]] = {}
    for code, text in sorted(cases, key=lambda c: c[0]):  # stable: rules, then outcomes, within a code
        if text not in means.setdefault(code, []):
            means[code].append(text)
    return {code: tuple(texts) for code, texts in means.items()}


def help_line(codes: dict[Exit, tuple[str, ...]]) -> str:
    """The "Exit codes:" line of a command's help: '0 done; 2 bad options or arguments; 3 ...'."""
    return "Exit codes: " + "; ".join(f"{int(code)} {', or '.join(texts)}" for code, texts in codes.items()) + "."


def codes_of(command: Callable[..., None]) -> dict[Exit, tuple[str, ...]]:
    """The exit codes of a command run under :func:`exit_on_error`, and what each means (its help's words)."""
    codes: dict[Exit, tuple[str, ...]] = command.exit_codes  # type: ignore[attr-defined]
    return codes


def exit_on_error(*own: ExitRule | ExitOutcome, raises: tuple[type[BaseException], ...] = ()) -> Callable[[F], F]:
    """Run a command so that an error a rule names ends it with the rule's message, hint and exit code, and
    end its help with the "Exit codes:" line made from the same declarations (see the module docstring).

    ``own`` rules come before the shared :data:`RULES`: a command's rule for a class replaces the shared one.
    ``own`` outcomes and ``raises`` (the shared errors the command's library call raises) only add to the
    help. An error no rule names propagates (a bug: the traceback is wanted).
    """
    rules = (*(r for r in own if isinstance(r, ExitRule)), *RULES)
    codes = exit_codes(rules, raises, tuple(o for o in own if isinstance(o, ExitOutcome)))
    unexplained = [r.error.__name__ for r in rules if not r.means] + \
                  [c.__name__ for c in raises if rule_for(c, rules) is None]
    if unexplained:  # a declaration the help could not show: refused when the command is defined
        raise ValueError(f"exit rules without a meaning, or raised errors without a rule: {unexplained}")

    def wrap(command: F) -> F:
        @functools.wraps(command)  # typer reads the wrapped signature, docstring and annotations
        def run(*args: Any, **params: Any) -> None:
            try:
                command(*args, **params)
            except Exception as exc:
                rule = rule_for(exc, rules)
                if rule is None:
                    raise
                import click  # here, not at the top: 5-6 ms of every command's start, for errors only

                ctx = click.get_current_context(silent=True)
                name = ctx.info_name if ctx is not None and ctx.info_name else command.__name__
                if rule.problems:
                    print_problems(getattr(exc, "problems", []))
                fail(rule.text(exc, name, params), rule.code, rule.hint.format(command=name) if rule.hint else None)

        # typer takes the help from the docstring (inspect.getdoc, which cleans it as it is here)
        run.__doc__ = inspect.cleandoc(command.__doc__ or "") + "\n\n" + help_line(codes)
        # function attributes, which Callable types cannot declare; tests check every command has them
        run.exit_rules = rules  # type: ignore[attr-defined]
        run.exit_codes = codes  # type: ignore[attr-defined]
        return cast(F, run)  # functools.wraps keeps the command's signature, which typer reads

    return wrap
