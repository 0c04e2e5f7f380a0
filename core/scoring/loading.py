"""Evidence loading: every read that scoring does, after the run's records are read.

For each step: its two frames (each distinct file decoded once, see :class:`FrameCache`), the image evidence
derived from them (global and region hashes, the exact pixel difference), the gap between a step's post
frame and the next step's pre frame, and its DOM snapshots, read into small page facts while their trees are
in memory. After the steps: what the referee needs (the final frame and DOM, frames a contract compares
with, reference screenshots). The analyzers that need a decoded frame or a parse tree run here, while
it is in memory (the pixel diff, the observation verifier and the expected-outcome checks, through
:func:`step_evidence` and :func:`trajcheck.analyzers.page.page_facts`); every later one runs in
:mod:`trajcheck.scoring.analysis` on the small findings they leave.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analyzers.ambient import Transition, transition_of
from ..analyzers import screencheck, unseen
from ..analyzers.contract import ContractState, Picture, hashed_regions
from ..analyzers.page import PageFacts, page_facts
from ..analyzers.image_evidence import ImageEvidence
from ..analyzers.pixeldiff import diff_frames, no_change
from ..analyzers.screentext import ScreenRead
from ..base.reasons import EffectReason
from ..schemas.records import Run, Step

from ..base.box import Box
from .contracts import LoadedContract, reference_paths
from ..media.dom import DomCache
from ..base.errors import Problem
from ..base.problems import Slug
from ..media.frames import Frame, FrameError, decode, read_frame_file, region_box, to_frame
from .options import ScoreOptions
from ..media.refcache import RefCountedCache
from ..base.runfiles import safe_join
from ..media.contractread import ContractReads
from ..media.screenread import MAX_CHANGES_PER_RUN, ScreenPlan

_FRAME_HINTS = {Slug.FRAMES_MISSING: "re-export the run with its screenshots, or drop the reference",
                Slug.FRAME_TOO_LARGE: "screenshots over Pillow's MAX_IMAGE_PIXELS are refused as decompression bombs"}


class FrameCache(RefCountedCache["Frame | FrameError"]):
    """Decoded frames of one run, each decoded once and dropped after its last use.

    Files of a run with the same bytes (a screenshot repeated because nothing changed, written under a
    new name each step) share one decode: the bytes are hashed (BLAKE2b, ~1 us per 20 KB PNG) and a
    frame already decoded from the same bytes is reused. Each frame is decoded like the one decoded before
    it (:func:`trajcheck.media.frames.decode`: only the rows that differ are converted and resized for the pHash),
    which holds one more frame in memory at most. Nothing is shared between runs."""

    def __init__(self, run: Run, run_dir: Path, uses: Counter[str]):
        super().__init__(run, run_dir, uses)
        self.decoded = 0  # frame files read (those sharing a decode included)
        self._reported: set[str] = set()
        self._digest: dict[str, bytes] = {}  # rel -> content digest, while cached
        self._by_digest: dict[bytes, Frame] = {}
        self._last: Frame | None = None  # the frame decoded last: the next one is decoded like it

    def _read(self, rel: str, path: Path, data: bytes | None) -> Frame | FrameError:
        try:
            raw = data if data is not None else read_frame_file(path)
        except FrameError as exc:  # not a regular file (a FIFO): never opened
            return exc
        except FileNotFoundError:
            return FrameError(Slug.FRAMES_MISSING, "file not found")
        except OSError as exc:
            return FrameError(Slug.FRAME_UNREADABLE, f"cannot read the file ({exc})")
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        frame = self._by_digest.get(digest)
        if frame is None:
            try:
                frame = decode(path, raw, like=self._last)
            except FrameError as exc:
                return exc
            self._by_digest[digest] = self._last = frame
        self._digest[rel] = digest
        self.decoded += 1
        return frame

    def _load(self, rel: str, step: Step, field_name: str) -> Frame | FrameError:
        path = safe_join(self.run_dir, rel)
        if rel in self.run.inline_frames:
            try:
                got = self._read(rel, Path(rel), self.run.inline_frames[rel])
            except FrameError as exc:  # an archive member unpacked now, over the frame byte budget
                got = exc
        elif path is None and rel in self.run.outside_files:  # beside the run, inside the folder being scored
            got = self._read(rel, Path(self.run.outside_files[rel]), None)
        elif path is None:  # checked at read time already; keep the guard where the file is opened
            got = FrameError(Slug.FRAME_UNREADABLE, "path escapes the run directory")
        else:
            got = self._read(rel, path, None)
        if isinstance(got, FrameError) and rel not in self._reported:
            self._reported.add(rel)
            hint = _FRAME_HINTS.get(got.slug, "re-export the screenshot as PNG, JPEG or WebP")
            self.problems.append(Problem(got.slug, f"frame {rel!r}: {got}", run=self.run.run_id, file=step.source,
                                         line=step.line, field=field_name, severity="warning", hint=hint))
        return got

    def digest_of(self, rel: str | None) -> bytes | None:
        """The content digest of the frame file ``rel`` while it is in memory (what OCR's cache is keyed by)."""
        return self._digest.get(rel) if rel else None

    def _drop(self, rel: str) -> None:
        self.cache.pop(rel, None)
        digest = self._digest.pop(rel, None)
        if digest is not None and digest not in self._digest.values():
            self._by_digest.pop(digest, None)

    def picture(self, rel: str | None, boxes: Iterable[Box]) -> Picture | None:
        """The frame at ``rel`` as the contract checks and judges read it (:func:`picture`), if it is still in
        memory."""
        f = self.cache.get(rel) if rel else None
        return picture(f, boxes) if isinstance(f, Frame) else None


def picture(frame: Frame, boxes: Iterable[Box]) -> Picture:
    """``frame`` as the contract checks and the reference judge read it: its pixels, its pHash, and the pHash
    of each of ``boxes`` that lies inside it. Hashed here, not in the analyzers: a region's hash may read (and
    write) the resize tables' on-disk cache, and the analyzers do no I/O."""
    return Picture(frame.rgb, frame.phash, {b: frame.region_hash(b) for b in boxes if b.left >= 0 and b.top >= 0
                                            and b.right <= frame.width and b.bottom <= frame.height})


def uses(steps: tuple[Step, ...]) -> tuple[Counter[str], Counter[str]]:
    """How many times each frame file and each DOM file will be asked for."""
    frames: Counter[str] = Counter()
    doms: Counter[str] = Counter()
    for i, s in enumerate(steps):
        frames.update(r for r in (s.frame_pre, s.frame_post) if r)
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if nxt is not None and s.frame_post and nxt.frame_pre and s.frame_post != nxt.frame_pre:
            frames.update([s.frame_post, nxt.frame_pre])  # the gap between two screenshots
        if s.page:
            doms.update(r for r in (s.page.dom_before, s.page.dom_after) if r)
    return frames, doms


def _outside_frame(run: Run, step: Step, post: Frame, sx: float, sy: float) -> Problem:
    a = step.action
    scale = f" (scaled x{sx:g} from screen coordinates)" if (sx, sy) != (1.0, 1.0) else ""
    return Problem(Slug.COORDS_OUTSIDE_FRAME,
                   f"action point ({a.x:g}, {a.y:g}) is outside the {post.width}x{post.height} frame{scale}; "
                   "only the global hash decides", run=run.run_id, file=step.source, line=step.line,
                   field="action.x", severity="warning",
                   hint="check run.json screen {width, height} against the frame size")


def step_evidence(run: Run, step: Step, pre: Frame | FrameError | None, post: Frame | FrameError | None,
                  tolerance: int, problems: list[Problem]) -> ImageEvidence:
    """The image evidence of one step from its decoded frames (either may be missing or bad). Used by the
    scorer and by the live verifier (:mod:`trajcheck.live`) alike."""
    if step.extra.get("shared_frames") is True:  # the reader gave this step's frame pair to another action
        return ImageEvidence(problem=EffectReason.SHARED_FRAMES)
    if not isinstance(pre, Frame) or not isinstance(post, Frame):
        bad = pre if isinstance(pre, FrameError) else post if isinstance(post, FrameError) else None
        return ImageEvidence(
            pre_hash=pre.phash if isinstance(pre, Frame) else None,
            post_hash=post.phash if isinstance(post, Frame) else None,
            problem=bad.slug if bad else Slug.FRAMES_MISSING,
            pre_thumb=pre.thumb if isinstance(pre, Frame) else None,
            post_thumb=post.thumb if isinstance(post, Frame) else None)
    region = None
    point = "none"
    at: tuple[float, float] | None = None
    a = step.action
    if a.point is not None:
        fx, fy, sx, sy = to_frame(*a.point, (run.screen_width, run.screen_height), (post.width, post.height))
        region = region_box(fx, fy, post.width, post.height)
        point = "in_frame" if region else "outside_frame"
        at = (fx, fy) if region else None
        if region is None:
            problems.append(_outside_frame(run, step, post, sx, sy))
    same_size = (pre.width, pre.height) == (post.width, post.height)
    if step.frame_pre == step.frame_post or pre is post:
        change = no_change(post.width, post.height, region)  # one file (or the same bytes) for both
    else:
        band = post.band if post.like is not None and post.like() is pre else None  # rows the decoder compared
        change = diff_frames(pre.px, post.px, tolerance, region if same_size else None,
                             at if same_size else None, band)
    return ImageEvidence(
        pre_hash=pre.phash, post_hash=post.phash, region=region,
        pre_region_hash=pre.region_hash(region) if region and same_size else None,
        post_region_hash=post.region_hash(region) if region else None,
        change=change, point=point, pre_thumb=pre.thumb, post_thumb=post.thumb)


@dataclass(frozen=True)
class RefereePlan:
    """What the referee will need after the step loop, so the loop keeps it in memory."""

    contract: LoadedContract | None
    eval_pos: int  # position (not index) of the step whose after-state is judged
    frame_rel: str | None
    dom_rel: str | None
    since: dict[int, str]  # step index -> frame file of the state after it (0: before the first step)
    run_refs: tuple[str, ...]  # reference screenshots named by the run itself


def plan_referee(run: Run, contract: LoadedContract | None) -> RefereePlan:
    """Which step the referee judges, and which of the run's files it will read."""
    steps = run.steps
    pos = len(steps) - 1
    if contract and contract.data.get("step") is not None:
        pos = next((i for i, s in enumerate(steps) if s.index == contract.data["step"]), pos)
    st = steps[pos]
    since: dict[int, str] = {}
    if contract:
        for c in contract.data["checks"]:
            if c["type"] in ("region_changed", "region_unchanged"):
                k = c["since_step"]
                rel = steps[0].frame_pre if k == 0 else next(
                    (s.frame_post for s in steps if s.index == k and s.frame_post), None)
                if rel:
                    since[k] = rel
    refs = run.extra.get("reference_screenshots")
    run_refs = tuple(r for r in refs if isinstance(r, str)) if isinstance(refs, list) else ()
    dom = (st.page.dom_after or st.page.dom_before) if st.page else None
    return RefereePlan(contract, pos, st.frame_post or st.frame_pre, dom, since, run_refs)


@dataclass
class RefereeEvidence:
    """What the referee reads: the contract's view of the judged state, and the reference screenshots."""

    final: Picture | None  # the frame of the judged state
    contract_state: ContractState | None  # None: no contract
    references: list[tuple[str, Picture]]  # for the reference judge: (file, picture)
    regions: list[list[int]]  # the contract's judge regions
    limits: dict[str, int]  # the contract's judge distance limits
    problems: list[Problem] = field(default_factory=list)


def _load_reference(base: Path, rel: str, run: Run, source: str, problems: list[Problem],
                    boxes: tuple[Box, ...]) -> Picture | None:
    path = safe_join(base, rel)
    if path is None:
        problems.append(Problem(Slug.PATH_ESCAPES_RUN, f"reference {rel!r} points outside {base}", run=run.run_id,
                                file=source, severity="warning", hint="keep references beside the contract"))
        return None
    try:
        f = decode(path)
    except FrameError as exc:
        problems.append(Problem(exc.slug, f"reference screenshot {rel!r}: {exc}", run=run.run_id, file=source,
                                severity="warning", hint="the check that needs it fails for missing evidence"))
        return None
    return picture(f, boxes)


def load_referee(run: Run, run_dir: Path, plan: RefereePlan, frames: FrameCache, doms: DomCache) -> RefereeEvidence:
    """Read what the referee needs, then release the files the plan kept for it."""
    problems: list[Problem] = []
    boxes = hashed_regions(plan.contract.data if plan.contract is not None else None)
    final = frames.picture(plan.frame_rel, boxes)
    snap = doms.cache.get(plan.dom_rel) if plan.dom_rel else None
    st = run.steps[plan.eval_pos]
    url = (st.page.url_after or st.page.url_before) if st.page else None
    acted = int(unseen.acts(st))  # the judged step's own action came after what was recorded before it
    ev = RefereeEvidence(final, None, [], [], {}, problems)
    if plan.contract is not None:
        c = plan.contract
        loaded = {rel: _load_reference(c.base, rel, run, c.source, problems, boxes)
                  for rel in reference_paths(c.data)}
        ev.contract_state = ContractState(
            url=url, dom=snap.tree if snap else None, text=snap.text.text if snap else None, frame=final,
            references=loaded,
            frames_after={k: p for k, rel in plan.since.items() if (p := frames.picture(rel, boxes))},
            dom_stale=acted if snap is not None and st.page is not None and not st.page.dom_after else 0,
            url_stale=acted if url is not None and st.page is not None and not st.page.url_after else 0)
        ev.references = [(rel, p) for rel in c.data.get("reference_screenshots", []) or [] if (p := loaded.get(rel))]
        ev.regions = list(c.data.get("judge_regions", []) or [])
        for k, name in (("judge_max_global_distance", "max_global"), ("judge_max_region_distance", "max_region")):
            if k in c.data:
                ev.limits[name] = c.data[k]
    for rel in plan.run_refs:
        p = _load_reference(run_dir, rel, run, "run.json", problems, boxes)
        if p is not None:
            ev.references.append((rel, p))
    for used in [plan.frame_rel, *plan.since.values()]:
        frames.release(used)
    if plan.dom_rel:
        doms.release(plan.dom_rel)
    return ev


@dataclass
class LoadedRun:
    """Everything scoring read from a run's files, per step and for the referee."""

    evidence: list[ImageEvidence]
    pages: list[PageFacts]
    transitions: list[Transition]  # frame pairs for ambient learning (steps, and gaps between steps)
    referee: RefereeEvidence
    frames_decoded: int
    problems: list[Problem]  # frames, DOM snapshots, step points, references: in that order
    #: What OCR read per step (empty: nothing read), and on the final frame since the last high-risk action.
    screen: list[list[ScreenRead]] = field(default_factory=list)
    final_screen: list[ScreenRead] = field(default_factory=list)
    #: Regions the rules asked to read that were not, OCR not being installed (:func:`trajcheck.media.ocr.engine`).
    ocr_unread: int = 0
    ocr_engine: str | None = None  # the engine that read, when any region was read
    #: Actions that change the screen after the run's last readable screenshot (None: it has none).
    actions_after_last_frame: int | None = None


def gap_transition(post: Any, pre: Any, tolerance: int, page: str | None) -> Transition | None:
    """The screen's change between one step's post frame and the next step's pre frame (nothing was done in
    between: an idle transition for ambient learning), or None when either is not a decoded frame or their
    sizes differ. The scorer and the live verifier (:mod:`trajcheck.live`) both use it."""
    if isinstance(post, Frame) and isinstance(pre, Frame) and post.rgb.shape == pre.rgb.shape:
        return Transition(diff_frames(post.px, pre.px, tolerance), idle=True, page=page)
    return None


def _gap(s: Step, nxt: Step | None, post: Any, frames: FrameCache, tolerance: int) -> Transition | None:
    """The gap transition between a step and the next, when they recorded two different files."""
    if nxt is None or not s.frame_post or not nxt.frame_pre or s.frame_post == nxt.frame_pre:
        return None
    t = gap_transition(post, frames.get(nxt.frame_pre, nxt, "frames.pre"), tolerance,
                       s.page.url_after if s.page else None)
    frames.release(s.frame_post)
    frames.release(nxt.frame_pre)
    return t


def load_run(run: Run, run_dir: Path, plan: RefereePlan, opts: ScoreOptions) -> LoadedRun:
    """Read every frame and DOM snapshot of ``run`` once, step by step, keeping only what later needs."""
    steps = run.steps
    frame_uses, dom_uses = uses(steps)
    frame_uses.update(r for r in [plan.frame_rel, *plan.since.values()] if r)  # kept for the referee
    checks = plan.contract.data.get("checks", []) if plan.contract is not None else []
    has_dom = plan.dom_rel is not None
    sp = ScreenPlan.of(run, opts.ocr, plan.frame_rel, has_dom, any(
        screencheck.reads_screen(c, has_dom) and screencheck.frame_of(c) == "final" for c in checks))
    cr = ContractReads.of(plan.contract.data if plan.contract is not None else None, has_dom, sp, run.goal)
    for rel in (sp.since_rel, sp.post_rel):
        if rel:
            frame_uses[rel] += 1  # kept for the final frame's read
    if plan.dom_rel:
        dom_uses[plan.dom_rel] += 1
    frames = FrameCache(run, run_dir, frame_uses)
    doms = DomCache(run, run_dir, dom_uses)
    evidence: list[ImageEvidence] = []
    pages: list[PageFacts] = []
    transitions: list[Transition] = []
    step_problems: list[Problem] = []
    screen: list[list[ScreenRead]] = []
    readable: set[str] = set()  # the frame files that decoded: what a screenshot shows
    for i, s in enumerate(steps):
        pre = frames.get(s.frame_pre, s, "frames.pre")
        post = frames.get(s.frame_post, s, "frames.post")
        readable.update(rel for rel, f in ((s.frame_pre, pre), (s.frame_post, post)) if rel and isinstance(f, Frame))
        ev = step_evidence(run, s, pre, post, opts.pixel_tolerance, step_problems)
        evidence.append(ev)
        digests = (frames.digest_of(s.frame_pre), frames.digest_of(s.frame_post))
        screen.append(sp.read_step(run, i, pre, post, ev.change, digests))
        cr.read_step(run, i, (pre, post), digests)
        t = transition_of(s, ev)
        frames.release(s.frame_pre)
        gap = _gap(s, steps[i + 1] if i + 1 < len(steps) else None, post, frames, opts.pixel_tolerance)
        transitions += [x for x in (t, gap) if x is not None]
        frames.release(s.frame_post)
        dom_b = doms.get(s.page.dom_before if s.page else None, s, "page.dom_before")
        dom_a = doms.get(s.page.dom_after if s.page else None, s, "page.dom_after")
        pages.append(page_facts(s, dom_b, dom_a, opts.observation))
        if s.page:
            doms.release(s.page.dom_before)
            doms.release(s.page.dom_after)
    got = [frames.cache.get(r) if r else None for r in (sp.since_rel, sp.post_rel, plan.frame_rel)]
    final_screen = sp.read_final(run, screen, (got[0], got[1], got[2]),
                                 (frames.digest_of(sp.since_rel), frames.digest_of(sp.post_rel),
                                  frames.digest_of(plan.frame_rel)), opts.pixel_tolerance,
                                 _last_post_looks(sp, evidence))
    cr.settle()  # the fallback passes that no later frame made needless, before the final read may decide
    cr.read_final(run, got[2], plan.frame_rel, frames.digest_of(plan.frame_rel), final_screen)
    for rel in (sp.since_rel, sp.post_rel):
        if rel:
            frames.release(rel)
    referee = load_referee(run, run_dir, plan, frames, doms)
    if referee.contract_state is not None:
        judged = steps[:plan.eval_pos + 1]
        referee.contract_state.screen = cr.evidence(
            unseen.unseen_steps(steps, readable),
            unseen.actions_after(judged, readable, plan.frame_rel) if plan.frame_rel else None,
            unseen.typed_unseen(steps, readable), unseen.typed_together(steps, readable))
        referee.contract_state.screen_missing = cr.missing()
        referee.contract_state.answer = final_answer(run)
    if sp.capped:
        step_problems.append(Problem(Slug.SCREEN_TEXT_CAPPED, f"{sp.capped} high-risk changes past the first "
                                     f"{MAX_CHANGES_PER_RUN} were not read on screen", run=run.run_id,
                                     severity="warning", hint="their screen_text is null"))
    problems = frames.problems + doms.problems + step_problems + referee.problems
    return LoadedRun(evidence, pages, transitions, referee, frames.decoded, problems, screen, final_screen,
                     sp.unread, sp.engine_version(any(screen) or bool(final_screen) or bool(cr.memo)),
                     unseen.actions_after(steps, readable))


def final_answer(run: Run) -> str | None:
    """The agent's final answer: its last DONE step's text (or the content it extracted); None without one."""
    done = next((s for s in reversed(run.steps) if s.action.type == "DONE"), None)
    if done is None:
        return None
    got = " ".join(str(v) for v in (done.action.text, done.extra.get("extracted_content")) if v)
    return got or None


def _last_post_looks(sp: ScreenPlan, evidence: list[ImageEvidence]) -> tuple[Any, Any]:
    """The pHash and thumbnail of the last high-risk step's post frame (what the final frame is compared to)."""
    last = sp.last_high_risk()
    ev = evidence[last] if last is not None else None
    return (ev.post_hash, ev.post_thumb) if ev is not None else (None, None)
