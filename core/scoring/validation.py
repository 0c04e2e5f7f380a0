"""Checking run directories without scoring them: format, paths, frame headers."""

from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass
from dataclasses import field as member
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from PIL import Image, UnidentifiedImageError

from ..base.errors import Problem, RunFormatError, UsageError, read_by
from ..base.problems import Slug
from ..media.frames import ALLOWED_FORMATS, FrameError, in_frame, to_frame
from ..base.inputs import NotRegularFile, regular_stat
from ..readers.discovery import RunRef, discover, get_reader, reader_names
from ..readers.kit.reader import Reader
from ..readers.mapping.meaning import contradictions
from ..analyzers import claims
from ..base.words import count
from .noanswer import declared_ends
from ..schemas.records import Run, Step
from ..base.runfiles import safe_join, scoring_root

if TYPE_CHECKING:
    from ..readers.mapping.joinreport import JoinReport


@dataclass
class ValidationReport:
    """What :func:`trajcheck.validate` found: how many runs it checked and every problem, in order."""

    runs: int
    problems: list[Problem]
    #: how the mapping's results file joined the runs (``[outcome] file``; None: no such join)
    join: "JoinReport | None" = None
    #: per reader and declaration, how many runs end without an answer (:class:`EndingsNote`): information
    endings: list["EndingsNote"] = member(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        """The problems that make a run (or a path argument) unreadable."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """The problems a run is still scored with."""
        return [p for p in self.problems if p.severity != "error"]

    @property
    def nothing_to_check(self) -> bool:
        """True when the input could not be checked at all: a path does not exist, or no run was found (files no
        reader reads, a mapping that matches nothing, an unfinished run, or nothing at all), as ``score`` says."""
        return not self.runs or any(p.slug == Slug.PATH_NOT_FOUND for p in self.problems)

    def to_json(self) -> dict[str, Any]:
        """The report as ``validate --format json`` prints it."""
        return {"runs": self.runs, "errors": len(self.errors), "warnings": len(self.warnings),
                "problems": [p.to_dict() for p in self.problems],
                "join": self.join.to_json() if self.join is not None else None,
                "endings": [e.to_json() for e in self.endings]}


@dataclass(frozen=True)
class EndingsNote:
    """Of the ``runs`` a reader read under one declaration of how their harness ends a run (``ends``: ``answer``,
    ``external``, None: undeclared), how many end without an answer, and what the referee makes of them: an
    information line of ``validate``, not a verdict."""

    reader: str
    runs: int
    without_answer: int
    ends: str | None

    def text(self) -> str:
        """``3 of 10 runs read by mapping:x end without an answer; declared ends = answer: they fail for no
        answer``."""
        then = {"answer": "declared ends = answer: they fail for no answer unless another source decides",
                "external": "declared ends = external (the harness may stop a run itself): they are unknown "
                            "(harness_may_stop) unless another source decides"}.get(
            self.ends or "", "ends undeclared: they are unknown (ends_undeclared) unless another source decides; "
                             "declare how the harness ends a run ([run] ends of a mapping, run.json ends)")
        verb = "ends" if self.without_answer == 1 else "end"
        return (f"{self.without_answer} of {count(self.runs, 'run')} read by {self.reader} {verb} without an answer"
                + (f"; {then}" if self.without_answer else f" (ends {self.ends or 'undeclared'})"))

    def to_json(self) -> dict[str, Any]:
        return {"reader": self.reader, "runs": self.runs, "without_answer": self.without_answer, "ends": self.ends}


def endings(read: dict[str, list[tuple[Run, Path]]], own: tuple[Reader, ...]) -> list[EndingsNote]:
    """Per reader and declaration of ``ends`` (the run's own, else its reader's), how many of the runs ``read``
    end without an answer (:func:`trajcheck.analyzers.claims.ended_without_answer`)."""
    out = []
    for name, runs in read.items():
        reader = get_reader(name, own)
        tally: dict[str | None, list[int]] = {}
        for run, _ in runs:
            run = declared_ends(run, reader)
            t = tally.setdefault(run.ends, [0, 0])
            t[0] += 1
            t[1] += claims.ended_without_answer(run, claims.claim_of(run))
        out += [EndingsNote(name, n, k, ends) for ends, (n, k) in tally.items()]
    return out


_SCORED_WITHOUT = "the step is scored without it (verdict null)"
_FRAME_HINT = {Slug.FRAME_UNREADABLE: "the file is there but cannot be decoded (truncated, empty, or not an image "
                                      "under an image's name): re-export the screenshot as PNG, JPEG or WebP; "
                                      + _SCORED_WITHOUT}



def _decodes(img: Image.Image) -> None:
    """Raises when the image cannot be decoded to its end (a truncated or damaged file whose header reads): a PNG's
    chunks are checked (CRC, no pixel decoded), a JPEG is decoded at 1/8 scale, a WebP in full."""
    if img.format == "PNG":
        img.verify()
        return
    if img.format == "JPEG":
        img.draft(img.mode, (max(1, img.size[0] // 8), max(1, img.size[1] // 8)))
    img.load()


def _frame_header(path: os.PathLike[str] | str | io.BytesIO) -> tuple[Slug | None, tuple[int, int] | None]:
    """(problem slug, size): the header read and the data checked to its end (:func:`_decodes`: a screenshot that
    is there but cannot be decoded is ``frame_unreadable``, as ``score`` finds it). A FIFO or a device is never
    opened (``not_a_regular_file``)."""
    try:
        if not isinstance(path, io.BytesIO):
            regular_stat(path)
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path, formats=ALLOWED_FORMATS) as img:
                size = img.size
                if Image.MAX_IMAGE_PIXELS and size[0] * size[1] > Image.MAX_IMAGE_PIXELS:
                    return Slug.FRAME_TOO_LARGE, None
                _decodes(img)
    except NotRegularFile:
        return Slug.NOT_A_REGULAR_FILE, None
    except FileNotFoundError:
        return Slug.FRAMES_MISSING, None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        return Slug.FRAME_TOO_LARGE, None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        return Slug.FRAME_UNREADABLE, None
    return None, size


def validate_paths(paths: Iterable[str | os.PathLike[str]], mapping: str | os.PathLike[str] | None = None,
                   input_format: str | None = None) -> ValidationReport:
    """Every problem of every run under ``paths``, with run, file, line, field and hint; ``mapping``: a
    mapping file (:mod:`trajcheck.readers.mapping.reader`) that reads logs of another shape; ``input_format``: the
    reader every run is read with (as ``score --input-format``)."""
    run_paths = [os.fspath(p) for p in paths]
    own: tuple[Reader, ...] = ()  # this call's mapping's reader, handed to discovery: nothing outlives the call
    declared: dict[str, tuple[bool, int]] = {}
    if mapping is not None:
        from ..readers.mapping.reader import Mapping, reader_of

        compiled = Mapping(Path(mapping))
        own = (reader_of(compiled),)
        declared = {compiled.name: (compiled.pre, compiled.shot_offset)}  # its alignment, named in a warning's hint
    if input_format is not None and input_format not in reader_names(own):
        raise UsageError(f"unknown input format {input_format!r}; formats: " + ", ".join(reader_names(own)))
    refs, problems = discover(run_paths, input_format, own)
    if mapping is not None and not refs:
        from ..readers.mapping.reader import explain

        problems += explain(Path(mapping), run_paths)
    ids: dict[str, str] = {}  # run_id -> the run that has it: score keeps the first, rejects the others
    read: dict[str, list[tuple[Run, Path]]] = {}  # by reader: whose readings the runs' frames are checked against
    for ref in refs:
        try:
            with scoring_root(ref.root):  # screenshots beside a run's folder, inside the argument, are found
                run, warns = get_reader(ref.reader, own).read(ref.path, ref.display)
        except RunFormatError as exc:
            problems += read_by(exc.problems, ref.reader)
            continue
        problems += read_by(warns, ref.reader)
        if run.run_id in ids:
            problems.append(Problem(Slug.DUPLICATE_RUN_ID, f"run_id {run.run_id!r} is already used by the run at "
                                    f"{ids[run.run_id]}; score would not score this run at {ref.display}",
                                    run=run.run_id, file=ref.display, field="run_id",
                                    hint="give every run its own run_id"))
        ids.setdefault(run.run_id, ref.display)
        read.setdefault(ref.reader, []).append((run, ref.run_dir))
        seen: dict[str, tuple[Slug | None, tuple[int, int] | None]] = {}
        for step in run.steps:
            problems += _step_frames(run, ref, step, seen)
    for reader, runs in read.items():  # the alignment and the points' space, against the screenshots
        problems += contradictions(runs, reader, declared.get(reader))
    join = _join(Path(mapping), refs) if mapping is not None else None
    if join is not None and join.nothing_joined:
        problems.append(Problem(Slug.MAPPING_MATCHES_NOTHING, join.why, file=str(mapping), field="outcome.file",
                                hint="correct [run] path, [outcome] file or [outcome.join] of the mapping "
                                     "(score stops with this error)"))
    return ValidationReport(len(refs), problems, join, endings(read, own))


def _step_frames(run: Run, ref: RunRef, step: Step,
                 seen: dict[str, tuple[Slug | None, tuple[int, int] | None]]) -> list[Problem]:
    """A step's frames that cannot be read, and its point outside its frame; ``seen``: the run's frames read so
    far (each is read once)."""
    problems: list[Problem] = []
    for field, rel in (("frames.pre", step.frame_pre), ("frames.post", step.frame_post)):
        if rel is None:
            continue
        if rel not in seen:
            if rel in run.inline_frames:  # carried inside the run's JSON (browser-use) or its archive
                try:
                    seen[rel] = _frame_header(io.BytesIO(run.inline_frames[rel]))
                except FrameError as exc:  # an archive member over the frame byte budget
                    seen[rel] = (exc.slug, None)
            else:
                path = safe_join(ref.run_dir, rel) or (Path(run.outside_files[rel]) if rel in
                                                        run.outside_files else None)
                seen[rel] = _frame_header(path) if path else (Slug.FRAME_UNREADABLE, None)
            slug, _ = seen[rel]
            if slug:
                msg = {Slug.FRAMES_MISSING: "frame file not found",
                       Slug.FRAME_TOO_LARGE: "frame is larger than Pillow's decompression-bomb limit",
                       Slug.NOT_A_REGULAR_FILE: "frame is not a regular file (a FIFO or a device); "
                                                "never opened",
                       Slug.FRAME_UNREADABLE: "frame cannot be decoded as a PNG, JPEG or WebP image"}[slug]
                problems.append(Problem(slug, f"{msg}: {rel}", run=run.run_id, file=step.source,
                                        line=step.line, field=field, severity="warning", reader=ref.reader,
                                        hint=_FRAME_HINT.get(slug, _SCORED_WITHOUT)))
    post = seen.get(step.frame_post or "", (None, None))[1]
    a = step.action
    if post and a.point is not None:
        fx, fy, _, _ = to_frame(*a.point, (run.screen_width, run.screen_height), post)
        if not in_frame(fx, fy, post):
            problems.append(Problem(Slug.COORDS_OUTSIDE_FRAME,
                                    f"action point ({a.x:g}, {a.y:g}) is outside the {post[0]}x{post[1]} frame",
                                    run=run.run_id, file=step.source, line=step.line, field="action.x",
                                    severity="warning", reader=ref.reader,
                                    hint="check run.json screen {width, height} against the frame size"))
    return problems


def _join(mapping: Path, refs: list[RunRef]) -> "JoinReport | None":
    """The join report of the mapping's results file over the runs found (None: it joins none by path)."""
    from ..readers.mapping.joinreport import of_refs
    from ..readers.mapping.schema import Mapping

    return of_refs(Mapping(mapping), refs)
