"""A log's readings tested against its screenshots, for runs already read (by a mapping or a built-in reader):
the frames decoded, each step's pair of frames diffed once, and :func:`trajcheck.analyzers.readings.weigh`
asked which frame alignment and which coordinate space the clicks support.

Two callers: ``draft-mapping`` reads its sample of runs through the draft with the points as logged and asks
which alignment and space to write (:func:`drafted`); ``validate`` asks whether the runs' frames contradict
what their reader declares (:func:`contradictions`), a warning ``reading_contradicted``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..kit.coords import smart_resize
from ...analyzers.pixeldiff import ChangeMap, diff_frames
from ...analyzers.readings import Choice, Sample, pointed, typing_at, weigh
from ...base.errors import Problem
from ...base.problems import Slug
from ...base.runfiles import safe_join
from ...media.frames import Frame, FrameError, decode, to_frame
from ...schemas.records import Run

#: Most runs, and most checked actions of one run, whose frames are decoded: enough for the margin rule to
#: decide (8 disagreements), bounded so that a folder of any size is checked in seconds.
MAX_RUNS = 20
MAX_ACTIONS = 60
#: The scales of a model space the draft tries (screenshot pixels per logged pixel), and their inverses (a
#: screen larger than its screenshot): the sizes harnesses resize screenshots by.
MODEL_SCALES = (1.25, 1.5, 2.0, 0.8, 2 / 3, 0.5)


def _spread(items: list[tuple[Run, Path]], n: int) -> list[tuple[Run, Path]]:
    if len(items) <= n:
        return items
    return [items[int(i * len(items) / n)] for i in range(n)]


class _Frames:
    """A run's frames decoded once each (None: missing or unreadable), each like the one before (the rows they
    share are not resized again for the pHash: :func:`trajcheck.media.frames.decode`)."""

    def __init__(self, run: Run, run_dir: Path):
        self.run, self.run_dir = run, run_dir
        self.got: dict[str, Frame | None] = {}
        self.last: Frame | None = None

    def __call__(self, rel: str | None) -> Frame | None:
        if rel is None:
            return None
        if rel not in self.got:
            try:
                if rel in self.run.inline_frames:
                    self.got[rel] = decode(Path(rel), self.run.inline_frames[rel], like=self.last)
                else:
                    path = safe_join(self.run_dir, rel) or (Path(self.run.outside_files[rel])
                                                            if rel in self.run.outside_files else None)
                    self.got[rel] = decode(path, like=self.last) if path is not None else None
            except (FrameError, OSError):
                self.got[rel] = None
            self.last = self.got[rel] or self.last
        return self.got[rel]


def _changes(run: Run, frames: _Frames, wanted: set[int]) -> tuple[list[ChangeMap | None], tuple[int, int] | None]:
    """The change map of each step's frames (for the steps in ``wanted``), and the frames' size."""
    out: list[ChangeMap | None] = [None] * len(run.steps)
    size = None
    for i in sorted(wanted):
        s = run.steps[i]
        a, b = frames(s.frame_pre), frames(s.frame_post)
        if a is None or b is None:
            continue
        size = size or (b.width, b.height)
        out[i] = diff_frames(a.px, b.px, band=b.band if b.like is not None and b.like() is a else None)
    return out, size


def sample_of(run: Run, run_dir: Path, relative: bool) -> Sample | None:
    """``run`` as the readings see it. ``relative``: the candidate spaces are scales of the points as read (in
    the run's screen space, mapped to frame pixels), named ``read`` and ``x1.25``...; otherwise the points
    are as logged and the spaces are those a mapping can declare (``screenshot``, ``model_scale 1.25``,
    ``relative-1000``, ``smart-resize``). None when the run has no action to check."""
    steps = run.steps
    pts = pointed([s.action.type for s in steps], [s.action.point for s in steps])
    keep = [i for i, p in enumerate(pts) if p is not None][:MAX_ACTIONS]
    if not keep:
        return None
    wanted = {j for i in keep for j in (i - 1, i, i + 1) if 0 <= j < len(steps)}
    changes, size = _changes(run, _Frames(run, run_dir), wanted)
    if size is None:
        return None
    kept = set(keep)
    points = tuple(pts[i] if i in kept else None for i in range(len(steps)))
    w, h = size
    if relative:
        _, _, fx, fy = to_frame(0, 0, (run.screen_width, run.screen_height), size)
        scales = {"read": (fx, fy), **{f"x{k:.3g}": (fx * k, fy * k) for k in MODEL_SCALES}}
    else:
        sh, sw = smart_resize(h, w)
        scales = {"screenshot": (1.0, 1.0), **{f"model_scale {k:.3g}": (k, k) for k in MODEL_SCALES},
                  "relative-1000": (w / 1000, h / 1000), "smart-resize": (w / sw, h / sh)}
    return Sample(points, tuple(changes), scales, typing_at([s.action.type for s in steps]))


def weigh_runs(runs: Sequence[tuple[Run, Path]], offsets: dict[str, int], relative: bool) -> tuple[Choice, Choice]:
    """The alignment and space that up to :data:`MAX_RUNS` of ``runs`` (spread over them) support."""
    samples = [s for run, d in _spread(list(runs), MAX_RUNS) if (s := sample_of(run, d, relative)) is not None]
    spaces = list(samples[0].scales) if samples else []
    return weigh(samples, offsets, spaces)


#: The alignment readings relative to the frames as read: the declared pairing, or one step off.
AS_READ = {"read": 0, "one step earlier": -1, "one step later": 1}


def supported(declared: tuple[bool, int], chosen: str) -> str:
    """The ``[step]`` lines that read the frames as the ``chosen`` alignment (``one step later`` or ``one step
    earlier`` than read) when a mapping declares ``declared`` = (screenshot_is is pre, screenshots_offset): a step
    one screenshot later under (pre, k) is (pre, k+1), under (post, k) it is (pre, k); one earlier under (pre, k)
    is (post, k), under (post, k) it is (post, k-1); (post, 1) is (pre, 0) and (pre, -1) is (post, 0)."""
    pre, k = declared
    if chosen == "one step later":
        side, off = "pre", k + 1 if pre else k
    else:
        side, off = "post", k if pre else k - 1
    if (side, off) in (("post", 1), ("pre", -1)):  # the same pairing without an offset: (post, 1) is (pre, 0)
        side, off = ("pre" if side == "post" else "post"), 0
    return f"screenshot_is = '{side}'" + (f" and screenshots_offset = {off}" if off else " (no screenshots_offset)")


def contradictions(runs: Sequence[tuple[Run, Path]], reader: str,
                   declared: tuple[bool, int] | None = None) -> list[Problem]:
    """``reading_contradicted`` warnings where the frames of ``runs`` (all read by ``reader``) choose another
    alignment or another scale of the points than the one read, by the margin rule. ``declared``: a mapping's
    (screenshot_is is pre, screenshots_offset), to name the lines that read the frames as they choose."""
    align, space = weigh_runs(runs, AS_READ, relative=True)
    out = []
    for c, what, fix in ((align, "frame alignment", "screenshot_is (pre or post) or screenshots_offset"),
                         (space, "coordinate space", "coordinates, model_scale or the screen size")):
        if c.chosen is not None and c.chosen != "read":
            hint = f"check the reader's {fix} against a few screenshots"
            if declared is not None and c.question == "alignment":
                hint = f"the screenshots support {supported(declared, c.chosen)}: {hint}"
            out.append(Problem(Slug.READING_CONTRADICTED,
                               f"the screenshots contradict the {what} the runs are read with: {c.evidence()}; "
                               f"{c.why}", run=runs[0][0].run_id, field=c.question,
                               severity="warning", reader=reader, hint=hint))
    return out
