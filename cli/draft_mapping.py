"""trajcheck draft-mapping: a mapping file drafted from a sample of the runs under a folder."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer

from .common import Exit, err, print_json
from .exits import ExitOutcome, exit_on_error
from .options import _format_option
from ..base.words import count


class DraftFormat(str, enum.Enum):
    """A draft is a TOML file for people to save and edit; JSON (the text and what was unsure) for scripts."""

    toml = "toml"
    json = "json"


@exit_on_error(ExitOutcome(Exit.OK, "a mapping was drafted (with --check: and it reads every run found)"),
               ExitOutcome(Exit.FINDINGS, "with --check: the draft leaves a run unread"),
               ExitOutcome(Exit.INPUT, "the folder does not exist, or holds nothing that looks like a log"))
def draft_mapping(
    folder: Annotated[Path, typer.Argument(help="A folder of runs (searched recursively).", show_default=False)],
    check: Annotated[bool, typer.Option("--check", help="Read and score the folder with the draft, and print "
                                        "runs read, actions understood and screenshots found (stderr).")] = False,
    sample: Annotated[int, typer.Option(help="How many runs (spread over the folder) the draft is made from.")] = 20,
    fmt: Annotated[DraftFormat, _format_option(DraftFormat)] = DraftFormat.toml,
) -> None:
    """Print a mapping file (TOML) drafted from the logs under FOLDER; what it is unsure of is a comment.

    Save it and score with it: trajcheck draft-mapping runs/ > mine.toml; trajcheck score runs/ --mapping mine.toml

    Example: trajcheck draft-mapping results/ --check
    """
    from ..commands import draft_mapping as drafted  # loaded when the command runs
    from ..errors import UsageError

    if sample < 1:
        raise UsageError("--sample must be at least 1")
    try:
        d = drafted(folder, sample=sample, check=check)
    except UsageError as exc:  # nothing under the folder to draft from: input that cannot be read as logs
        err.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(int(Exit.INPUT)) from None
    if fmt is DraftFormat.json:
        print_json(d.to_json())
    else:
        sys.stdout.write(d.text)  # the TOML itself (its strings escaped): never read as markup
        sys.stdout.flush()
    if d.reader is not None:  # a reader trajcheck has reads every run: no mapping is drafted
        err.print(f"no mapping is needed: the {d.reader} reader reads these {count(d.runs, 'run')} (trajcheck formats "
                  f"{d.reader})", markup=False, highlight=False)
        return
    err.print(f"drafted from {d.sampled} of {count(d.runs, 'run')}; {count(len(d.unsure), 'thing')} unsure (comments "
              "marked UNSURE)",
              markup=False, highlight=False)
    if d.coverage is not None:
        err.print(d.summary, markup=False, highlight=False)
        err.print(f"scored {count(d.scored or 0, 'run')}, {d.invalid} invalid; verdicts: "
                  + ", ".join(f"{k} {v}" for k, v in sorted((d.verdicts or {}).items())), markup=False,
                  highlight=False)
        for item in d.coverage["not_read"][:20]:
            err.print(f"not read: {item['run']}: {item['why']}", markup=False, highlight=False)
        if d.coverage["not_read"]:
            raise typer.Exit(int(Exit.FINDINGS))
