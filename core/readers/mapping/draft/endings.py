"""What a draft says of how its runs end: the answers that read as the harness's own stop (``[step]
harness_stop``), and ``[run] ends``, which it never declares but writes commented with the sampled runs' evidence.

A harness that stops a run itself sometimes writes its stop as an answer (VisualWebArena's ``stop [Early stop:
Failed to parse actions for 3 times]``). The draft reads its sampled runs through itself and looks at each run's
last answer: one whose text starts as harnesses word their own messages (:data:`HARNESS_WORDS`: an early stop,
an error, an exception, a time-out, a step limit) is the harness's, not the agent's. Then the draft writes
``harness_stop`` with that expression, marked UNSURE with the answers it saw, so that those runs end without an
answer (unknown while ``ends`` is undeclared) instead of claiming success in the harness's words. The words are
how harnesses in general report, not one log's: the sample decides only whether the line is written."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from ....analyzers import claims
from ....base.errors import RunFormatError, UsageError
from ....schemas.records import Run
from .vocab import toml_str

#: The start of an answer's text that is a harness's message, not an agent's answer: an early stop, an error or
#: exception, a time-out, a step, turn or iteration limit reached, a budget exceeded, an abort.
HARNESS_WORDS = (r"(?i)^\W{0,3}(?:early[ _-]?stop(?:ped)?|error|exception|traceback|time[ _-]?out|timed[ _-]out"
                 r"|max(?:imum)?[ _-]?(?:steps?|turns?|iterations?)|reach(?:ed)?[ _-]max|(?:step|turn|iteration)"
                 r"[ _-]limit|budget[ _-]exceeded|abort(?:ed)?)\b")
_WORDS = re.compile(HARNESS_WORDS)


def _read(text: str, runs: list[Path]) -> list[Run] | None:
    """The runs read through the drafted mapping ``text`` (None: the draft does not compile)."""
    from ..read import read_mapped
    from ..schema import Mapping

    out = []
    with tempfile.TemporaryDirectory(prefix="trajcheck-draft-") as tmp:
        path = Path(tmp) / "draft.toml"
        path.write_text(text, encoding="utf-8")
        try:
            m = Mapping(path)
        except UsageError:
            return None
        for d in runs:
            try:
                out.append(read_mapped(m, d, d.name)[0])
            except (RunFormatError, OSError, ValueError, RecursionError):
                continue
    return out


def _last_answer(run: Run) -> str | None:
    done = next((s for s in reversed(run.steps) if s.action.type == "DONE"), None)
    return None if done is None else (done.action.text or "")


def harness_answers(runs: list[Run]) -> list[str]:
    """The last answers of ``runs`` that read as a harness's message (:data:`HARNESS_WORDS`)."""
    return [a for r in runs if (a := _last_answer(r)) and _WORDS.search(a)]


def ends_evidence(runs: list[Run]) -> tuple[int, int, int]:
    """Of ``runs``: how many, how many end in an answer (a DONE, an infeasible report or a FAIL step: what the
    no-answer rule counts as one), and how many end in the harness's own stop (``extra.harness_stop``)."""
    answered = sum(not claims.ended_without_answer(r, claims.claim_of(r)) for r in runs)
    return len(runs), answered, sum(bool(r.extra.get("harness_stop")) for r in runs)


def _ends_lines(read: int, answered: int, stopped: int) -> list[str]:
    """What the draft says of ``[run] ends``: never a declaration (how a harness ends its runs is not in a sample
    of its logs: a run that answered does not show that the harness never stops one itself), but the commented
    key with the evidence it has. First the UNSURE line, then the comment lines of ``[run]``."""
    said = f"{answered} of {read} sampled runs end in an answer (a DONE, FAIL or infeasible report)" if read \
        else "no sampled run could be read through the draft"
    if stopped:
        said += f", {stopped} in the harness's own stop (harness_stop)"
    guess = "answer" if read and answered == read else "external"
    return [f"ends: how the harness ends a run is not declared; {said}. Until it is, a run that ended without an "
            "answer is unknown (ends_undeclared), never failed",
            f'ends = "{guess}"    UNSURE, not declared: {said}. Declare "answer" if the harness ends a run only by '
            'the agent\'s answer or a step limit,',
            '"external" if it may also stop one itself (its own state check, a person)']


def drafted(text: str, runs: list[Path]) -> tuple[list[str], list[str], list[str]]:
    """What the draft ``text`` (without these lines) gets from the sampled ``runs`` read through it: its
    ``[step]`` lines (``harness_stop``), its UNSURE lines, and the comment lines of ``[run]`` (``ends``)."""
    got = _read(text, runs) or []
    step: list[str] = []
    unsure: list[str] = []
    seen = harness_answers(got)
    if seen:
        examples = ", ".join(repr(a[:60]) for a in list(dict.fromkeys(seen))[:2])
        why = (f"{len(seen)} of {len(got)} sampled runs end in an answer that reads as the harness's own message "
               f"({examples}): read as the harness's stop, not the agent's answer")
        step.append(f"harness_stop = {toml_str(HARNESS_WORDS)}   # UNSURE: {why}")
        unsure.append(f"harness_stop: {why}; check how the harness ends a run (its code or docs) and keep, narrow "
                      "or remove the line")
        got = _read(text.replace("\n[step]\n", "\n[step]\n" + step[0] + "\n", 1), runs) or got
    ends = _ends_lines(*ends_evidence(got))
    return step, unsure + ends[:1], ends[1:]
