"""What a contract's screen checks read (issue 39, part 3): the area each check names, on the frame it names
(the final one, the one after step k, or any frame of the run), read with OCR while the frame is in memory,
into :class:`~trajcheck.analyzers.screencheck.ScreenView` for :mod:`trajcheck.analyzers.screencheck`.

Reads are shared: a frame's area read for one check serves every other check on it (and the on-disk cache of
:func:`trajcheck.media.ocr.cached_lines` serves a second scoring); on the final frame, what the final read of a
claiming run already saw (:meth:`trajcheck.media.screenread.ScreenPlan.read_final`) decides a check that finds
its text there, and the check's whole area is read only when it does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analyzers import screencheck
from ..analyzers.screencheck import ScreenEvidence, ScreenView
from ..analyzers.screentext import MIN_LINE_CONFIDENCE, ScreenRead, TextLine
from ..base.box import Box
from ..schemas.records import Run
from . import ocr
from .frames import Frame
from .screenread import MARGIN, MAX_CHANGES_PER_RUN, ScreenPlan, ScreenReader


def _inside(b: Box, area: Box) -> bool:
    return b.left >= area.left and b.top >= area.top and b.right <= area.right and b.bottom <= area.bottom


def _shaky(lines: tuple[TextLine, ...], area: Box, scale: float, chk: dict[str, Any]) -> list[Box]:
    """The boxes of the lines read below the confidence threshold that could hold what ``chk`` looks for
    (:func:`trajcheck.analyzers.screencheck.could_hold`), widened by the margin a region is read with and kept
    inside ``area``; overlapping ones joined; at most :data:`trajcheck.media.ocr.MAX_ISLANDS`."""
    m = round(MARGIN * scale)
    out: list[Box] = []
    for x in lines:
        if x.confidence >= MIN_LINE_CONFIDENCE or not screencheck.could_hold(str(chk["type"]), chk, x.text):
            continue
        b = Box(max(area.left, x.box.left - m), max(area.top, x.box.top - m), min(area.right, x.box.right + m),
                min(area.bottom, x.box.bottom + m))
        for i, o in enumerate(out):
            if b.left < o.right and o.left < b.right and b.top < o.bottom and o.top < b.bottom:
                out[i] = Box(min(b.left, o.left), min(b.top, o.top), max(b.right, o.right), max(b.bottom, o.bottom))
                break
        else:
            out.append(b)
    return out[:ocr.MAX_ISLANDS]


#: The most frames whose fallback passes wait for later frames' page reads (:meth:`ContractReads.settle`): the
#: frames held in memory for them are bounded; past it the first waiting frame's passes run.
MAX_WAITING = 8

#: The passes that read what a page read missed, in order (:meth:`ContractReads._more`).
FALLBACKS = ("islands", "shaky", "evened", "faint")


def _whole_first(chk: dict[str, Any]) -> bool:
    """Is ``chk`` about a part of its frame (read after the checks about the whole frame, whose read it may use)?"""
    return "region" in chk or chk.get("area", "frame") != "frame"


@dataclass
class ContractReads:
    """The contract checks of one run decided from the screen, and what was read for each."""

    checks: list[tuple[int, dict[str, Any]]]  # (position, 1-based; check)
    sp: ScreenPlan
    views: dict[int, list[ScreenView]] = field(default_factory=dict)
    seen: dict[int, set[Any]] = field(default_factory=dict)  # frames read per check ("any": each once)
    capped: dict[int, int] = field(default_factory=dict)  # frames of an "any" check left unread
    memo: dict[tuple[Any, Box, Any], tuple[TextLine, ...]] = field(default_factory=dict)
    goal: str | None = None  # the run's goal: lines that quote it are left out of the checks
    decided: set[int] = field(default_factory=set)  # "any" checks a frame decided: no further frame is read
    #: The checks on any frame whose page read of a frame left them undecided, their fallback passes not yet run
    #: (run, check position, check, frame, digest, index of its view): :meth:`settle`.
    waiting: list[tuple[Run, int, dict[str, Any], Frame, bytes | None, int]] = field(default_factory=list)

    @classmethod
    def of(cls, contract: dict[str, Any] | None, has_dom: bool, sp: ScreenPlan,
           goal: str | None = None) -> "ContractReads":
        checks = [(i, c) for i, c in enumerate((contract or {}).get("checks", []), start=1)
                  if screencheck.reads_screen(c, has_dom)]
        # the plan of a frame's reads: the checks about the whole frame first, so that a check about a part of it
        # (a region, the title band) takes its lines from that read rather than reading them again (_from_whole)
        return cls(sorted(checks, key=lambda pc: _whole_first(pc[1])), sp, goal=goal)

    @property
    def wants_final(self) -> bool:
        return any(screencheck.frame_of(c) == "final" for _, c in self.checks)

    def missing(self) -> str:
        """Why a check has no reads at all."""
        if self.sp.mode == "off":
            return "screen text not read (--ocr off)"
        _eng, why = ocr.engine() if self.checks else (None, None)
        return f"screen text not read ({why})" if why else "no frame of the state the check names"

    def _read(self, run: Run, frame: Frame, digest: bytes | None, chk: dict[str, Any],
              later: bool = False) -> tuple[Box, Any, bool] | None:
        """The lines of the check's area on ``frame`` (None: OCR not installed), and whether they decide it;
        ``later``: only the page read (the fallback passes are left to :meth:`settle`)."""
        scale = self.sp.scale(run, frame)
        box = screencheck.area(chk, frame.width, frame.height, scale)
        if box is None:
            return None
        whole = box == Box(0, 0, frame.width, frame.height)
        at = max(scale, ocr.TEXT_SCALE) if whole else scale  # a whole screen at its own resolution
        key = (digest if digest is not None else id(frame), box, at)
        if key not in self.memo:
            reader = self.sp.reader() if self.sp.mode != "off" else None
            if reader is None:
                self.sp.wanted += self.sp.mode != "off"  # said as ocr_not_installed, with the other regions
                return box, None, False
            part = None if whole else self._from_whole(reader, frame, digest, box, max(scale, ocr.TEXT_SCALE))
            self.memo[key] = part if part is not None else reader.read(frame, digest, box, at)
        lines = self.memo[key]
        if screencheck.found(str(chk["type"]), chk, lines, self.goal):
            return box, lines, True
        if later:  # the page read left it undecided: its fallback passes wait (settle)
            return box, lines, False
        return box, *self._fallbacks(run, frame, digest, (box, at), (lines, chk))

    def _fallbacks(self, run: Run, frame: Frame, digest: bytes | None, area: tuple[Box, float],
                   read: tuple[tuple[TextLine, ...], dict[str, Any]]) -> tuple[tuple[TextLine, ...], bool]:
        """The fallback passes of a check whose page read left it undecided, each only while it still is, its new
        lines matched alone: the lines with them, and whether they decide it."""
        lines, chk = read
        start, kind = len(lines), str(chk["type"])
        for more in FALLBACKS:
            lines = lines + self._more(run, frame, digest, area, more, (lines, chk))
            if screencheck.found(kind, chk, lines, self.goal, start):
                return lines, True
            start = len(lines)
        return lines, False

    def _from_whole(self, reader: ScreenReader, frame: Frame, digest: bytes | None, box: Box,
                    at: float) -> tuple[TextLine, ...] | None:
        """The lines inside ``box`` of the frame's whole read, when one was made (for a check, the final read or
        the referee) and read them all with confidence; None otherwise (the box is read itself, at its scale)."""
        full = Box(0, 0, frame.width, frame.height)
        lines = self.memo.get((digest if digest is not None else id(frame), full, at))
        if lines is None:
            lines = reader.made.get((digest, full, at)) if digest is not None else None
        if lines is None:
            return None
        inside = tuple(x for x in lines if _inside(x.box, box))
        return inside if inside and all(x.confidence >= MIN_LINE_CONFIDENCE for x in inside) else None

    def _more(self, run: Run, frame: Frame, digest: bytes | None, area: tuple[Box, float], how: str,
              read: tuple[tuple[TextLine, ...], dict[str, Any]]) -> tuple[TextLine, ...]:
        """Lines of the area that its page read missed or misread, read only for a check that has not found its
        text: ``islands``, the solid elements read alone (:func:`trajcheck.media.ocr.islands`: a coloured
        button, toast or chat bubble); ``shaky``, each line read below the confidence threshold read again
        alone at twice its CSS size (a whole frame is read at its own resolution, where small text is read
        poorly); ``evened``, the area read again with its light evened out, where a dialog darkens the page
        behind it (:func:`trajcheck.media.ocr.dimmed`); ``faint``, the words set in a grey close to their ground
        read alone with their contrast stretched (:func:`trajcheck.media.ocr.faint`). Without them a text on the
        screen but not read would fail a true success's check. Lines already read with confidence are left out.
        ``area``: the box and the scale its page read used; ``read``: the lines read so far and the check.
        ``shaky`` reads only the lines that could hold the check's text, ``evened`` only the dimmed part of the
        area (:func:`trajcheck.media.ocr.dimmed_region`): never the whole frame again."""
        box, at = area
        known, chk = read
        dim = ocr.dimmed_region(frame.luma, box, self.sp.scale(run, frame)) if how == "evened" else None
        if how == "evened" and dim is None:
            return ()
        key = (digest if digest is not None else id(frame), box, how if how != "shaky" else (how, repr(chk)))
        if key not in self.memo:
            reader = self.sp.reader()
            assert reader is not None  # the area's page read used it
            scale = self.sp.scale(run, frame)
            if how == "islands":
                got = [x for b in ocr.islands(frame.luma, box, scale)
                       for x in ocr.read_island(reader.engine, frame.luma, b, scale)]
            elif how == "shaky":
                got = [x for b in _shaky(known, box, scale, chk) for x in reader.read(frame, digest, b, scale)]
            elif how == "faint":
                got = [x for b in ocr.faint(frame.luma, box, scale)
                       for x in ocr.read_faint(reader.engine, frame.luma, b, scale)]
            else:
                assert dim is not None
                got = ocr.read_evened(reader.engine, frame.luma, dim, at)
            seen = {screencheck.norm(x.text) for x in known if x.confidence >= MIN_LINE_CONFIDENCE}
            self.memo[key] = tuple(x for x in got if screencheck.norm(x.text) not in seen)
        return self.memo[key]

    def _add(self, run: Run, pos: int, chk: dict[str, Any], frame: Any, digest: bytes | None, label: str,
             rel: str | None) -> None:
        if not isinstance(frame, Frame) or pos in self.decided:
            return
        seen = self.seen.setdefault(pos, set())
        key = digest if digest is not None else id(frame)
        if key in seen:
            return
        if len(seen) >= MAX_CHANGES_PER_RUN:
            self.capped[pos] = self.capped.get(pos, 0) + 1
            return
        seen.add(key)
        anyf = screencheck.frame_of(chk) == "any"
        got = self._read(run, frame, digest, chk, later=anyf)
        if got is None:
            self.views.setdefault(pos, []).append(ScreenView(label, rel, Box(0, 0, 0, 0), ()))
            return
        if got[1] is not None:
            self.views.setdefault(pos, []).append(ScreenView(label, rel, got[0], got[1]))
        if got[2] and anyf:
            self.decided.add(pos)  # found on this frame: what later frames show cannot change the verdict
        elif anyf and got[1] is not None:
            self.waiting.append((run, pos, chk, frame, digest, len(self.views[pos]) - 1))
            if len({id(w[3]) for w in self.waiting}) > MAX_WAITING:
                self.settle(1)

    def settle(self, frames: int | None = None) -> None:
        """Run the fallback passes that the page reads of checks on any frame left waiting, frame by frame in the
        order they were read (``frames``: only the first so many frames), for each check not decided since: a
        check that a later frame's page read decided has no frame read again (issue 48: the islands, shaky lines
        and faint words of frames that cannot change its verdict). Whether a check is decided, and on which frame
        first, is as if each frame's passes had run when it was read: only reads that decide nothing are left out."""
        firsts: list[int] = []
        while self.waiting and (frames is None or len(firsts) < frames or id(self.waiting[0][3]) in firsts):
            run, pos, chk, frame, digest, k = self.waiting.pop(0)
            if id(frame) not in firsts:
                firsts.append(id(frame))
            if pos in self.decided:
                continue
            view = self.views[pos][k]
            scale = self.sp.scale(run, frame)
            whole = view.box == Box(0, 0, frame.width, frame.height)
            lines, done = self._fallbacks(run, frame, digest, (view.box, max(scale, ocr.TEXT_SCALE) if whole
                                                               else scale), (view.lines, chk))
            self.views[pos][k] = ScreenView(view.frame, view.file, view.box, lines)
            if done:
                self.decided.add(pos)

    def read_step(self, run: Run, i: int, frames: tuple[Any, Any], digests: tuple[bytes | None, bytes | None]) -> None:
        """Read what the checks about the frame after step ``i`` (or before the first, or any frame) need. A check
        on any frame reads a step's pre frame too where the step before has no post frame: a harness that
        screenshots only before each action shows the state after a step in the next step's pre frame."""
        s = run.steps[i]
        own_pre = i == 0 or run.steps[i - 1].frame_post is None
        for pos, chk in self.checks:
            f = screencheck.frame_of(chk)
            if (i == 0 and f == 0) or (own_pre and f == "any"):
                self._add(run, pos, chk, frames[0], digests[0], f"before step {s.index}" if f == "any"
                          else "after step 0", s.frame_pre)
            if f == s.index or f == "any":
                self._add(run, pos, chk, frames[1], digests[1], f"after step {s.index}", s.frame_post)

    def read_final(self, run: Run, final: Any, rel: str | None, digest: bytes | None,
                   prior: list[ScreenRead]) -> None:
        """Read the final frame's area of each check about it, unless what was read of it already decides. What
        the final read saw decides a check on any frame too (the final frame is one of the run's frames): a text
        that its regions, read at twice their CSS size, show with confidence where the whole frame's read did not."""
        if not isinstance(final, Frame):
            return
        scale = self.sp.scale(run, final)
        for pos, chk in self.checks:
            on = screencheck.frame_of(chk)
            if on not in ("final", "any") or pos in self.decided:
                continue
            box = screencheck.area(chk, final.width, final.height, scale)
            if box is not None and prior:
                lines = tuple(x for r in prior for x in r.after if _inside(x.box, box))
                if lines and screencheck.found(str(chk["type"]), chk, lines, self.goal):
                    view = ScreenView("final", rel, box, lines)
                    self.views[pos] = [view] if on == "final" else [*self.views.get(pos, []), view]
                    self.decided.add(pos)
                    continue
            if on == "final":
                self._add(run, pos, chk, final, digest, "final", rel)

    def evidence(self, unseen: tuple[int, int] = (0, 0), after_final: int | None = None,
                 typed: tuple[tuple[int, str], ...] = (),
                 together: tuple[tuple[int, int, str], ...] = ()) -> dict[int, ScreenEvidence]:
        """What each check read. ``unseen``: of the actions that change the screen, how many have no screenshot
        after them (a check on any frame that does not find its text is undecided when some do), ``typed`` the
        TYPE actions among them (:func:`trajcheck.analyzers.unseen.typed_unseen`), ``together`` the texts typed over
        consecutive TYPEs (:func:`trajcheck.analyzers.unseen.typed_together`); ``after_final``: the actions
        after the final frame (a check on the final frame is undecided when some are)."""
        self.settle()
        out = {}
        stale = f"{after_final} action{'s' * (after_final != 1)} after the last screenshot: the final state was " \
                "not seen" if after_final else None
        gap = f"{unseen[0]} of {unseen[1]} actions have no screenshot after them" if unseen[0] else None
        for pos, chk in self.checks:
            on = screencheck.frame_of(chk)
            views = [v for v in self.views.get(pos, []) if v.box.width > 0]
            return_missing: str | None
            if len(views) < len(self.views.get(pos, [])):
                return_missing = f"region {chk.get('region')} is outside the frame"
            elif self.capped.get(pos):
                return_missing = f"{self.capped[pos]} frames past the first {MAX_CHANGES_PER_RUN} were not read"
            else:
                return_missing = None if views else self.missing()
            if on == "any" and return_missing is None:
                return_missing = gap
            out[pos] = ScreenEvidence(tuple(views), return_missing, stale if on == "final" else None,
                                      typed if on == "any" else (), self.goal, together if on == "any" else ())
        return out
