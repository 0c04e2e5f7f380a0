"""Where scoring reads the screen (issue 31): the regions a high-risk step changed, and what appeared on a
claiming run's final frame since its last high-risk action, read with OCR (:mod:`trajcheck.media.ocr`) into
:class:`~trajcheck.analyzers.screentext.ScreenRead` for the evidence referee.

Nothing else is read: not every frame, not the whole screen of every step. A region is a group of the pixel
diff's *content* blobs (carets, focus rings and noise left out) within :data:`JOIN` CSS pixels of each
other, widened by :data:`MARGIN` CSS pixels, read on the frame after the action only: a line is new when
pixels under it changed (the diff's changed cells), so text already there is not taken for the action's
response and the frame before is never read. A change larger than a quarter of the frame is a new screen,
read as one region at the frame's own resolution (a page's text is large enough; a message's region is read
at twice its CSS size: :data:`trajcheck.media.ocr.TEXT_SCALE`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analyzers import claims, highrisk
from ..analyzers.pixeldiff import CELL, ChangeMap, diff_frames
from ..analyzers.screentext import ScreenRead, TextLine, is_new_screen
from ..schemas.records import Run

from . import ocr
from ..base.box import Box
from .frames import Frame

#: Margin around a change, in CSS pixels (a message's padding, so its first and last letters are whole).
MARGIN = 8
#: Changes closer than this (CSS pixels) are read as one region (the lines of one message).
JOIN = 24
#: The most regions read for one change; more is read as one region around all of them.
MAX_REGIONS = 6
#: The most changes read in one run (its high-risk steps', and its final frame's): a run of hundreds of submits
#: is read in bounded time, and the steps left unread are said (screen_text_capped). The final frame is read
#: whatever the count: it is what a claim of success is checked against.
MAX_CHANGES_PER_RUN = 40


#: The final read of a frame on which nothing changed since the frame it is compared with (the same bytes, or
#: only carets and noise): nothing new appeared, so nothing is read, and ``screen_text_final`` is an empty list
#: (read, nothing new) rather than null (not read).
NOTHING_NEW = ScreenRead(Box(0, 0, 0, 0), ())

#: The device scales a frame is read at: a frame downscaled to half its screen, up to a 4x capture. Past them a
#: declared screen size is taken to be wrong rather than the frame (a crop is never read at 8x or 1/8).
MIN_SCALE = 0.5
MAX_SCALE = 4.0


@dataclass(frozen=True)
class ScreenReader:
    """OCR as one run's scoring uses it: the engine, and the reads made, by the frame's bytes, box and scale (a
    contract's check about a part of a frame takes its lines from a whole read of it the referee made:
    :meth:`trajcheck.media.contractread.ContractReads._from_whole`)."""

    engine: ocr.OcrEngine
    made: dict[tuple[bytes, Box, float], tuple[TextLine, ...]] = field(default_factory=dict, compare=False)

    def read(self, frame: Frame, digest: bytes | None, box: Box, scale: float) -> tuple[TextLine, ...]:
        # the frame's grey pixels (Pillow's L conversion, made for its pHash): what a read prepares anyway
        got = tuple(ocr.cached_lines(self.engine, digest, frame.luma, box, scale))
        if digest is not None:
            self.made[(digest, box, scale)] = got
        return got


def _grow(b: Box, by: int, w: int, h: int) -> Box:
    return Box(max(0, b.left - by), max(0, b.top - by), min(w, b.right + by), min(h, b.bottom + by))


def _near(p: Box, q: Box, gap: int) -> bool:
    return p.left - gap < q.right and q.left - gap < p.right and p.top - gap < q.bottom and q.top - gap < p.bottom


def _union(p: Box, q: Box) -> Box:
    return Box(min(p.left, q.left), min(p.top, q.top), max(p.right, q.right), max(p.bottom, q.bottom))


def regions(change: ChangeMap, scale: float) -> list[tuple[Box, bool]]:
    """The regions of a change to read, each with whether it is a new screen. Empty: nothing but carets,
    outlines, restyles or noise changed."""
    w, h = change.width, change.height
    boxes = [Box(*b.box) for b in change.blobs if b.kind == "content"]
    if not boxes and change.bbox is not None and not change.blobs:
        boxes = [Box(*change.bbox)]
    if not boxes:
        return []
    gap = round(JOIN * scale)
    groups: list[Box] = []
    for b in sorted(boxes):
        for i, g in enumerate(groups):
            if _near(g, b, gap):
                groups[i] = _union(g, b)
                break
        else:
            groups.append(b)
    merged = True
    while merged and len(groups) > 1:  # a box that grew may now touch another
        merged = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                if _near(groups[i], groups[j], gap):
                    groups[i] = _union(groups[i], groups.pop(j))
                    merged = True
                    break
            if merged:
                break
    if len(groups) > MAX_REGIONS:
        all_of = groups[0]
        for g in groups[1:]:
            all_of = _union(all_of, g)
        groups = [all_of]
    margin = round(MARGIN * scale)
    out = []
    for g in groups:
        box = _grow(g, margin, w, h)
        if box.height >= 6 * scale and box.width >= 6 * scale:  # too small to hold a letter
            out.append((box, is_new_screen(box, w, h)))
    return out


def _changed_under(change: ChangeMap, line: TextLine) -> bool:
    """Did pixels under ``line``'s box change (any changed cell of the diff's grid)?"""
    cells = change.cells
    if cells.size == 0:
        return True
    b = line.box
    return bool(cells[b.top // CELL: -(-b.bottom // CELL), b.left // CELL: -(-b.right // CELL)].any())


def read_change(reader: ScreenReader, pre: Frame, post: Frame, digests: tuple[bytes | None, bytes | None],
                change: ChangeMap, scale: float) -> list[ScreenRead]:
    """What each region of ``change`` (between ``pre`` and ``post``) reads on the post frame, each line marked
    new or not."""
    if (pre.width, pre.height) != (post.width, post.height) or change.size_changed:
        box = Box(0, 0, post.width, post.height)
        return [ScreenRead(box, reader.read(post, digests[1], box, max(scale, ocr.TEXT_SCALE)), (), True)]
    out = []
    for box, whole in regions(change, scale):
        lines = _of_whole(reader, post, digests[1], box, max(scale, ocr.TEXT_SCALE)) if whole else None
        if lines is None:
            lines = reader.read(post, digests[1], box, max(scale, ocr.TEXT_SCALE) if whole else scale)
        out.append(ScreenRead(box, lines, tuple(_changed_under(change, x) for x in lines), whole))
    return out


def _of_whole(reader: ScreenReader, frame: Frame, digest: bytes | None, box: Box,
              at: float) -> tuple[TextLine, ...] | None:
    """The lines of a new screen's region (read at the frame's own resolution, as a whole frame is) taken from the
    frame's whole read at that scale when one was made (a contract's check read it): the lines whose centre lies
    in ``box``. None when none was made: the region is read itself."""
    lines = reader.made.get((digest, Box(0, 0, frame.width, frame.height), at)) if digest is not None else None
    if lines is None:
        return None
    return tuple(x for x in lines if box.left <= (x.box.left + x.box.right) / 2 < box.right
                 and box.top <= (x.box.top + x.box.bottom) / 2 < box.bottom)


def read_since(reader: ScreenReader, before: Frame, final: Frame, digests: tuple[bytes | None, bytes | None],
               tolerance: int, scale: float) -> list[ScreenRead]:
    """What appeared on ``final`` since ``before`` (the frame before the last high-risk action)."""
    if before is final:
        return []
    change = diff_frames(before.px, final.px, tolerance) if before.px.shape == final.px.shape else None
    if change is None:
        box = Box(0, 0, final.width, final.height)
        return [ScreenRead(box, reader.read(final, digests[1], box, max(scale, ocr.TEXT_SCALE)), (), True)]
    return read_change(reader, before, final, digests, change, scale)


@dataclass
class ScreenPlan:
    """What one run's scoring reads on screen: the changes of its high-risk steps where no DOM snapshot after
    them says what the page showed (``always``: DOM or not), and for a run that claims success, what appeared on
    its final frame since the frame before its last high-risk action (``since_rel``, kept in memory for it)."""

    mode: str  # auto | always | off
    high_risk: list[bool]  # per step; empty when OCR is off
    since_rel: str | None = None  # the pre frame of the last high-risk step (else the first), for the final read
    post_rel: str | None = None  # the post frame of the last high-risk step, when not the final frame itself
    wanted: int = 0  # regions asked for (read or not)
    last_post: bytes | None = None  # the content digest of the last high-risk step's post frame, once read
    used: ScreenReader | None = None  # the reader, once a region asked for it
    read: int = 0  # changes read
    capped: int = 0  # changes left unread past MAX_CHANGES_PER_RUN

    def _over(self) -> bool:
        """Count one change to read; True (and counted as capped) past :data:`MAX_CHANGES_PER_RUN`."""
        if self.read >= MAX_CHANGES_PER_RUN:
            self.capped += 1
            return True
        self.read += 1
        return False

    @classmethod
    def of(cls, run: Run, mode: str, final_rel: str | None, final_has_dom: bool,
           contract_reads_final: bool = False) -> "ScreenPlan":
        """The plan of ``run``: ``final_rel`` is the frame the referee judges, ``final_has_dom`` whether a DOM
        snapshot of that state exists, ``contract_reads_final`` whether its contract asks what the final screen
        shows. The final frame is read for a run that claims success or whose contract asks, wherever no DOM
        says what it shows: what appeared since the frame before the last high-risk action, or since the first
        frame when no action was high-risk (issue 39)."""
        if mode == "off":
            return cls(mode, [])
        risks = [highrisk.classify(s.action.type, s.action.keys, s.reasoning, s.action.text,
                                   s.action.extra).high_risk for s in run.steps]
        sp = cls(mode, risks)
        last = sp.last_high_risk()
        if run.steps and final_rel and (mode == "always" or not final_has_dom) \
                and (contract_reads_final or claims.claim_of(run).claimed):
            first = run.steps[0]
            sp.since_rel = run.steps[last].frame_pre if last is not None else (first.frame_pre or first.frame_post)
            if last is not None and run.steps[last].frame_post != final_rel:
                sp.post_rel = run.steps[last].frame_post
        return sp

    def last_high_risk(self) -> int | None:
        return next((i for i in range(len(self.high_risk) - 1, -1, -1) if self.high_risk[i]), None)

    def reader(self) -> ScreenReader | None:
        """The process's OCR, built when a region first needs it (a run whose every step has a DOM snapshot
        never loads Tesseract), or None when it is not installed."""
        if self.used is None:
            eng, _missing = ocr.engine()
            self.used = ScreenReader(eng) if eng is not None else None
        return self.used

    @property
    def unread(self) -> int:
        """Regions asked for and not read (OCR not installed)."""
        return 0 if self.used is not None else self.wanted

    def engine_version(self, read: bool) -> str | None:
        return self.used.engine.version if read and self.used is not None else None

    @staticmethod
    def scale(run: Run, frame: Frame) -> float:
        """The frame's pixels per CSS pixel of the declared screen, as it is (2 for a HiDPI capture, 1.25 for a
        1280-pixel frame of a 1024-wide display), to two decimals and within [:data:`MIN_SCALE`, :data:`MAX_SCALE`].
        Rounding it to a half lost a 1.25 frame to 1.0 (``round(2.5) == 2``), and read its text too small."""
        if not run.screen_width or run.screen_width <= 0:
            return 1.0
        return max(MIN_SCALE, min(MAX_SCALE, round(frame.width / run.screen_width, 2)))

    def read_step(self, run: Run, i: int, pre: Any, post: Any, change: ChangeMap | None,
                  digests: tuple[bytes | None, bytes | None]) -> list[ScreenRead]:
        """What OCR reads of step ``i``'s change (frames ``pre``, ``post``, either possibly not decoded)."""
        if not self.high_risk or not self.high_risk[i] or change is None or not change.changed \
                or not isinstance(pre, Frame) or not isinstance(post, Frame):
            return []
        page = run.steps[i].page
        if self.mode != "always" and page is not None and page.dom_after:
            return []
        self.wanted += 1
        reader = self.reader()
        if reader is None or self._over():
            return []
        if not any(self.high_risk[i + 1:]):
            self.last_post = digests[1]
        return read_change(reader, pre, post, digests, change, self.scale(run, post))

    def read_final(self, run: Run, screen: list[list[ScreenRead]], frames: tuple[Any, Any, Any],
                   digests: tuple[bytes | None, bytes | None, bytes | None], tolerance: int,
                   last_post_looks: tuple[Any, Any] = (None, None)) -> list[ScreenRead]:
        """What appeared on the final frame since ``before`` (``frames``: the frame ``since_rel``, the last
        high-risk step's post frame ``post_rel`` or None, the final frame; ``digests`` theirs). What the last
        high-risk step's read saw is reused, not read again: when the final frame is that post frame (its file,
        the same bytes, or the same screen to the pHash and thumbnail) its read is the final read; otherwise only
        the regions changed since that post frame are read, and its lines outside them are carried over."""
        before, post, final = frames
        last = self.last_high_risk()
        if self.since_rel is None or not isinstance(final, Frame):
            return []
        done = screen[last] if last is not None else []
        if done and (self.post_rel is None or (self.last_post is not None and digests[2] == self.last_post)
                     or (last_post_looks[0] is not None and (final.phash, final.thumb) == last_post_looks)):
            return list(done)  # the same screen as the last high-risk step's post frame, read already
        self.wanted += 1
        reader = self.reader()
        if reader is None:
            return []
        scale = self.scale(run, final)
        if done and isinstance(post, Frame) and post.px.shape == final.px.shape:
            change = diff_frames(post.px, final.px, tolerance)
            kept = _carried(done, change)
            fresh = read_change(reader, post, final, (digests[1], digests[2]), change, scale) if change.changed else []
            return (kept + _without(fresh, {x.text for r in kept for x in r.after})) or [NOTHING_NEW]
        if not isinstance(before, Frame):
            return []
        return read_since(reader, before, final, (digests[0], digests[2]), tolerance, scale) or [NOTHING_NEW]


def _carried(done: list[ScreenRead], change: ChangeMap) -> list[ScreenRead]:
    """The reads of the last high-risk step's post frame without the lines whose pixels changed since (those
    regions are read again on the final frame)."""
    out = []
    for r in done:
        keep = [k for k, x in enumerate(r.after) if not _changed_under(change, x)]
        if keep:
            out.append(ScreenRead(r.box, tuple(r.after[k] for k in keep),
                                  tuple(r.new[k] for k in keep) if r.new else (), r.whole))
    return out


def _without(reads: list[ScreenRead], carried: set[str]) -> list[ScreenRead]:
    """``reads`` without their lines that did not change and are among the lines carried over (a line read in a
    region grouped with a change near it, already read as it was after the last high-risk action)."""
    out = []
    for r in reads:
        keep = [k for k, x in enumerate(r.after) if not (r.new and not r.new[k] and x.text in carried)]
        if keep:
            out.append(ScreenRead(r.box, tuple(r.after[k] for k in keep),
                                  tuple(r.new[k] for k in keep) if r.new else (), r.whole))
    return out
