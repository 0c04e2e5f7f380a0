"""One path from an error to a message and an exit code: every command runs under :func:`exit_on_error`.

The library raises domain errors (:mod:`trajcheck.errors`) and never exits; here each kind of error gets
its exit code (the README's "Exit codes"), a one-line message on stderr and, where there is one, a hint.
The most specific rule wins (a class's own rule before its base's), so a command may re-word one kind
(`score` says "cannot write the ledger: ...") or handle one more (`report` makes an OSError exit 3)::

    @exit_on_error(Rule(OSError, Exit.INPUT, "cannot write the report: {error}"))
    def report(...) -> None: ...
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar, Union, cast

from trajcheck.api import NoRunsFound
from trajcheck.errors import LedgerError, QueryError, RunFormatError, UsageError
from trajcheck.lock import LedgerBusy

from .common import Exit, fail, print_problems

#: A message template (``str.format`` fields ``error`` and ``command``) or a function of the error and the
#: command's parameters, for a message that names one of them.
Message = Union[str, Callable[[BaseException, Mapping[str, Any]], str]]


@dataclass(frozen=True)
class Rule:
    """How one kind of error ends a command."""

    error: type[BaseException]
    code: Exit
    message: Message = "{error}"
    hint: str | None = None  # ``str.format`` field ``command``
    problems: bool = False  # print the error's ``problems`` first, one line each

    def text(self, exc: BaseException, command: str, params: Mapping[str, Any]) -> str:
        """The error line's text for ``exc`` raised by ``command`` called with ``params``."""
        if callable(self.message):
            return self.message(exc, params)
        return self.message.format(error=exc, command=command)


#: The rules every command shares. LedgerBusy is a LedgerError: its own rule wins for it.
RULES: tuple[Rule, ...] = (
    Rule(UsageError, Exit.USAGE),
    Rule(LedgerError, Exit.INPUT),
    Rule(LedgerBusy, Exit.LOCKED, hint="nothing was written; {command} again when it is done, or raise --wait"),
    Rule(QueryError, Exit.INPUT, "query failed: {error}",
         "the views are `runs` and `steps`; `trajcheck columns` lists them"),
    Rule(NoRunsFound, Exit.INPUT, hint="pass run directories (holding run.json) or folders that contain them",
         problems=True),
    Rule(RunFormatError, Exit.INPUT),
)

F = TypeVar("F", bound=Callable[..., None])


def rule_for(exc: BaseException, rules: tuple[Rule, ...] = RULES) -> Rule | None:
    """The rule for ``exc``: the first rule naming its class, else its nearest base class's; None if none."""
    for cls in type(exc).__mro__:
        for rule in rules:
            if rule.error is cls:
                return rule
    return None


def exit_on_error(*own: Rule) -> Callable[[F], F]:
    """Run a command so that an error a rule names ends it with the rule's message, hint and exit code.

    ``own`` rules come before the shared :data:`RULES`: a command's rule for a class replaces the shared one.
    An error no rule names propagates (a bug: the traceback is wanted).
    """
    rules = (*own, *RULES)

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

        # a function attribute, which Callable types cannot declare; tests check every command has it
        run.exit_rules = rules  # type: ignore[attr-defined]
        return cast(F, run)  # functools.wraps keeps the command's signature, which typer reads

    return wrap
