"""Scoring: run directory -> typed records -> evidence -> analyzers -> ledger rows.

One run is the unit of work. A worker reads the run, decodes each distinct frame
file exactly once (consecutive steps usually share a frame), derives the global
hash, the region hashes and the exact pixel difference from that one decode,
releases each frame as soon as no later step needs it, and returns plain rows.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections import Counter, deque
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from trajcheck.analyzers import highrisk, loops, observation, perceptual, predictions, reward
from trajcheck.analyzers.observation import ObservationFinding, PageEvidence
from trajcheck.analyzers.contract import NOT_APPLICABLE, ContractResult, ContractState, Picture
from trajcheck.analyzers.predictions import PredictionFinding
from trajcheck.analyzers.referee import Judge, Verdict
from trajcheck.analyzers import claims, contract as contract_mod, evidence as evidence_mod, referee
from trajcheck.analyzers import messages
from trajcheck.analyzers.messages import PageMessages
from trajcheck.analyzers.ambient import Transition, learn_ambient
from trajcheck.analyzers.perceptual import EffectFinding, ImageEvidence
from trajcheck.analyzers.pixeldiff import diff_frames, no_change
from trajcheck.schemas.ledger import SCHEMA_VERSION
from trajcheck.schemas.records import Run, Step

from . import __version__, incremental, remote, rowcheck
from .contracts import LoadedContract, find_contract, reference_paths
from .digest import file_manifest, input_digest, options_fingerprint, special_files
from .incremental import Previous  # noqa: F401  (re-exported: ledger.previous builds them)
from .options import ScoreOptions  # noqa: F401  (re-exported: the library's entry point)
from .dom import DomCache, Snapshot
from .errors import Problem, RunFormatError
from .hashing import Hash64
from .frames import Frame, FrameError, decode, read_frame_file, region_box, to_frame
from .discovery import RunRef, discover, get_reader
from .rundir import safe_join


@dataclass
class RunResult:
    run: dict[str, Any]
    steps: list[dict[str, Any]]
    frames: int = 0
    problems: list[Problem] = field(default_factory=list)
    display: str = ""  # the run directory relative to the argument it was found under

    @property
    def ok(self) -> bool:
        return self.run["status"] == "ok"


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def invalid_result(ref_display: str, run_path: str, problems: list[Problem], source_format: str = "trajcheck.run/1") -> RunResult:
    row = _empty_run_row(ref_display, run_path, source_format)
    row["status"] = "invalid"
    row["error"] = "; ".join(str(p) for p in problems)
    return RunResult(row, [], 0, problems, ref_display)


def _empty_run_row(run_id: str, run_path: str, source_format: str) -> dict[str, Any]:
    return {
        "run_id": run_id, "status": "ok", "error": "", "warnings": [], "source_format": source_format,
        "run_path": run_path, "schema_version": SCHEMA_VERSION, "trajcheck_version": __version__,
    }


class _FrameCache:
    """Decoded frames of one run, each decoded once and dropped after its last use.

    Files of a run with the same bytes (a screenshot repeated because nothing changed, written under a
    new name each step) share one decode: the bytes are hashed (BLAKE2b, ~1 us per 20 KB PNG) and a
    frame already decoded from the same bytes is reused. Nothing is shared between runs."""

    def __init__(self, run: Run, run_dir: Path, uses: Counter[str]):
        self.run = run
        self.run_dir = run_dir
        self.uses = uses
        self.cache: dict[str, Frame | FrameError] = {}
        self.decoded = 0  # frame files read (those sharing a decode included)
        self.problems: list[Problem] = []
        self._reported: set[str] = set()
        self._digest: dict[str, bytes] = {}  # rel -> content digest, while cached
        self._by_digest: dict[bytes, Frame] = {}

    def _load(self, rel: str, path: Path, data: bytes | None) -> Frame | FrameError:
        try:
            raw = data if data is not None else read_frame_file(path)
        except FrameError as exc:  # not a regular file (a FIFO): never opened
            return exc
        except FileNotFoundError:
            return FrameError("frames_missing", "file not found")
        except OSError as exc:
            return FrameError("frame_unreadable", f"cannot read the file ({exc})")
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        frame = self._by_digest.get(digest)
        if frame is None:
            try:
                frame = decode(path, raw)
            except FrameError as exc:
                return exc
            self._by_digest[digest] = frame
        self._digest[rel] = digest
        self.decoded += 1
        return frame

    def get(self, rel: str | None, step: Step, field_name: str) -> Frame | FrameError | None:
        if rel is None:
            return None
        if rel not in self.cache:
            path = safe_join(self.run_dir, rel)
            if rel in self.run.inline_frames:
                try:
                    self.cache[rel] = self._load(rel, Path(rel), self.run.inline_frames[rel])
                except FrameError as exc:  # an archive member unpacked now, over the frame byte budget
                    self.cache[rel] = exc
            elif path is None:  # checked at read time already; keep the guard where the file is opened
                self.cache[rel] = FrameError("frame_unreadable", "path escapes the run directory")
            else:
                self.cache[rel] = self._load(rel, path, None)
        got = self.cache[rel]
        if isinstance(got, FrameError) and rel not in self._reported:
            self._reported.add(rel)
            hint = {"frames_missing": "re-export the run with its screenshots, or drop the reference",
                    "frame_too_large": "screenshots over Pillow's MAX_IMAGE_PIXELS are refused as decompression bombs",
                    }.get(got.slug, "re-export the screenshot as PNG, JPEG or WebP")
            self.problems.append(Problem(got.slug, f"frame {rel!r}: {got}", run=self.run.run_id, file=step.source,
                                         line=step.line, field=field_name, severity="warning", hint=hint))
        return got

    def release(self, rel: str | None) -> None:
        if rel is None:
            return
        self.uses[rel] -= 1
        if self.uses[rel] <= 0:
            self.cache.pop(rel, None)
            digest = self._digest.pop(rel, None)
            if digest is not None and digest not in self._digest.values():
                self._by_digest.pop(digest, None)


def step_evidence(run: Run, step: Step, pre: Frame | FrameError | None, post: Frame | FrameError | None,
                   tolerance: int, problems: list[Problem]) -> ImageEvidence:
    if step.extra.get("shared_frames") is True:  # the reader gave this step's frame pair to another action
        return ImageEvidence(problem="shared_frames")
    if not isinstance(pre, Frame) or not isinstance(post, Frame):
        bad = pre if isinstance(pre, FrameError) else post if isinstance(post, FrameError) else None
        return ImageEvidence(
            pre_hash=pre.phash if isinstance(pre, Frame) else None,
            post_hash=post.phash if isinstance(post, Frame) else None,
            problem=bad.slug if bad else "frames_missing")
    region = None
    point = "none"
    at: tuple[float, float] | None = None
    a = step.action
    if a.has_point:
        fx, fy, sx, sy = to_frame(a.x, a.y, (run.screen_width, run.screen_height),  # type: ignore[arg-type]
                                  (post.width, post.height))
        region = region_box(fx, fy, post.width, post.height)
        point = "in_frame" if region else "outside_frame"
        at = (fx, fy) if region else None
        if region is None:
            scale = f" (scaled x{sx:g} from screen coordinates)" if (sx, sy) != (1.0, 1.0) else ""
            problems.append(Problem(
                "coords_outside_frame",
                f"action point ({a.x:g}, {a.y:g}) is outside the {post.width}x{post.height} frame{scale}; "
                "only the global hash decides", run=run.run_id, file=step.source, line=step.line,
                field="action.x", severity="warning",
                hint="check run.json screen {width, height} against the frame size"))
    same_size = (pre.width, pre.height) == (post.width, post.height)
    if step.frame_pre == step.frame_post or pre is post:
        change = no_change(post.width, post.height, region)  # one file (or the same bytes) for both
    else:
        change = diff_frames(pre.px, post.px, tolerance, region if same_size else None,
                             at if same_size else None)
    return ImageEvidence(
        pre_hash=pre.phash, post_hash=post.phash, region=region,
        pre_region_hash=pre.region_hash(region) if region and same_size else None,
        post_region_hash=post.region_hash(region) if region else None,
        change=change, point=point)


def score_run(ref: RunRef, opts: ScoreOptions, fingerprint: str | None = None) -> RunResult:
    """Score one run directory; never raises for bad input (the row says what is wrong).
    The row carries the run's input digest (see :mod:`trajcheck.digest`)."""
    if ref.url is not None:
        try:
            with remote.staged(ref.url) as local:
                res = score_run(RunRef(local, ref.display, ref.reader), opts, fingerprint)
        except Exception as exc:  # noqa: BLE001  (a store error costs this run only)
            return invalid_result(ref.display, ref.url, [Problem(
                "store_unreadable", f"{ref.url}: {type(exc).__name__}: {exc}", run=ref.display,
                hint="check the URL, the credentials and the endpoint")], ref.reader)
        res.run["run_path"] = ref.url
        inputs = json.loads(res.run["inputs"])
        inputs["root"] = ref.url
        res.run["inputs"] = json.dumps(inputs, sort_keys=True)
        return res
    with _one_blas_thread():
        res = _score_run_safely(ref, opts)
    res = rowcheck.checked(res, ref)  # a value the ledger cannot store costs this run, not the batch
    files = file_manifest(Path(ref.path))
    res.run["warnings"] = res.run["warnings"] + special_files(files, res.run["run_id"], res.run["warnings"])
    fp = fingerprint if fingerprint is not None else options_fingerprint(opts, None)
    res.run["input_digest"] = input_digest(files, ref.reader, fp)
    res.run["inputs"] = json.dumps({"root": ref.key, "files": files}, sort_keys=True)
    return res


_blas: Any = None


def _one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs on one thread. The pHash resize is a handful of small matrix
    products per frame; BLAS threads on top of one worker process per core fight over the cores (measured:
    2.4x slower on 2 cores). threadpoolctl finds the BLAS numpy loaded, once per process."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        _blas = ThreadpoolController()
        keep_freed_memory()
    return _blas.limit(limits=1, user_api="blas")


#: glibc malloc settings for a scoring process: buffers up to this size come from the heap, not mmap,
#: and up to TRIM of free heap stays mapped. A frame's buffers (a 2560x1600 RGBA frame is 16 MiB) are then
#: reused from one frame to the next instead of being returned to the kernel and faulted in again page
#: by page: with Wuffs' decoder that was 4 ms of a 6 ms decode on this machine. Peak memory stays that of
#: the largest frames, so it is still flat in the number of runs.
MMAP_THRESHOLD = 64 << 20
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory() -> None:
    """Apply MMAP_THRESHOLD and TRIM_THRESHOLD through glibc's mallopt; a no-op on any other C library."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library already loaded into this process
    except (OSError, AttributeError, TypeError):  # no mallopt (macOS, Windows): leave the allocator alone
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    mallopt(m_mmap_threshold, MMAP_THRESHOLD)
    mallopt(m_trim_threshold, TRIM_THRESHOLD)


def _score_run_safely(ref: RunRef, opts: ScoreOptions) -> RunResult:
    try:
        return _score_run(ref, opts)
    except RunFormatError as exc:
        return invalid_result(ref.display, str(ref.path), exc.problems, ref.reader)
    except RecursionError:
        return invalid_result(ref.display, str(ref.path), [Problem(
            "json_too_deep", "a record is nested too deeply to read", run=ref.display,
            hint="flatten the run's JSON")], ref.reader)
    except MemoryError:
        return invalid_result(ref.display, str(ref.path), [Problem(
            "out_of_memory", "ran out of memory reading this run", run=ref.display,
            hint="score it alone with --jobs 1, or check its frames' sizes")], ref.reader)


def _uses(steps: tuple[Step, ...]) -> tuple[Counter[str], Counter[str]]:
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


@dataclass
class _PageFacts:
    """What a step's page evidence says, computed while its DOM trees are in memory."""

    obs: ObservationFinding
    dom_after_hash: str | None = None
    title: str | None = None
    text: str | None = None
    expected_ran: tuple[str, ...] = ()
    expected_failed: tuple[str, ...] = ()
    url_as_expected: bool | None = None
    kind: str = "generic"
    messages_before: PageMessages | None = None  # None: no DOM snapshot
    messages_after: PageMessages | None = None
    login_form_after: bool | None = None  # exactly one password field after (None: no DOM snapshot)


def _page_facts(s: Step, before: Snapshot | None, after: Snapshot | None, opts: ScoreOptions) -> _PageFacts:
    p = s.page
    sem = s.semantic
    ev = PageEvidence(
        url_before=p.url_before if p else None, url_after=p.url_after if p else None,
        dom_before=before.hash if before else None, dom_after=after.hash if after else None,
        skeleton_before=before.skeleton if before else None, skeleton_after=after.skeleton if after else None,
        focus_before=p.focus_before if p else None, focus_after=p.focus_after if p else None,
        did_network_occur=s.client.did_network_occur if s.client else None,
        did_dom_mutate=s.client.did_dom_mutate if s.client else None,
        did_url_change=s.client.did_url_change if s.client else None,
        action_succeeded=sem.action_succeeded if sem else None, task_completed=sem.task_completed if sem else None,
        confidence=sem.confidence if sem else None)
    obs = observation.verify(ev, opts.observation)
    a = s.action
    node = None
    if before is not None and before.tree is not None and a.has_point:
        node = predictions.element_at(before.tree, float(a.x), float(a.y))  # type: ignore[arg-type]
    kind = predictions.action_kind(a.type, a.url, node)
    facts = _PageFacts(obs, after.hash if after else None,
                       (p.title_after if p and p.title_after else after.text.title if after else None),
                       after.text.text if after else None, kind=kind,
                       messages_before=before.messages if before else None,
                       messages_after=after.messages if after else None,
                       login_form_after=messages.login_form(after.tree) if after else None)
    if s.expected:
        ran, failed, url_ok = predictions.check_expected(
            s.expected, before.tree if before else None, after.tree if after else None,
            p.url_before if p else None, p.url_after if p else None)
        facts.expected_ran, facts.expected_failed, facts.url_as_expected = tuple(ran), tuple(failed), url_ok
    return facts


@dataclass(frozen=True)
class _RefereePlan:
    """What the referee will need after the step loop, so the loop keeps it in memory."""

    contract: LoadedContract | None
    eval_pos: int  # position (not index) of the step whose after-state is judged
    frame_rel: str | None
    dom_rel: str | None
    since: dict[int, str]  # step index -> frame file of the state after it (0: before the first step)
    run_refs: tuple[str, ...]  # reference screenshots named by the run itself


def _plan_referee(run: Run, contract: LoadedContract | None) -> _RefereePlan:
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
    return _RefereePlan(contract, pos, st.frame_post or st.frame_pre, dom, since, run_refs)


def _score_run(ref: RunRef, opts: ScoreOptions) -> RunResult:
    run, warnings = get_reader(ref.reader).read(ref.path, ref.display)
    steps = run.steps
    contract, contract_problems = find_contract(ref.path, run.task_id, opts.contracts_dir, run.run_id)
    plan = _plan_referee(run, contract)
    frame_uses, dom_uses = _uses(steps)
    frame_uses.update(r for r in [plan.frame_rel, *plan.since.values()] if r)  # kept for the referee
    if plan.dom_rel:
        dom_uses[plan.dom_rel] += 1
    frames = _FrameCache(run, ref.path, frame_uses)
    doms = DomCache(run, ref.path, dom_uses)
    evidence: list[ImageEvidence] = []
    pages: list[_PageFacts] = []
    transitions: list[Transition] = []
    step_problems: list[Problem] = []
    for i, s in enumerate(steps):
        pre = frames.get(s.frame_pre, s, "frames.pre")
        post = frames.get(s.frame_post, s, "frames.post")
        ev = step_evidence(run, s, pre, post, opts.pixel_tolerance, step_problems)
        evidence.append(ev)
        t = step_transition(s, ev)
        if t is not None:
            transitions.append(t)
        frames.release(s.frame_pre)
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if nxt is not None and s.frame_post and nxt.frame_pre and s.frame_post != nxt.frame_pre:
            b = frames.get(nxt.frame_pre, nxt, "frames.pre")
            if isinstance(post, Frame) and isinstance(b, Frame) and post.rgb.shape == b.rgb.shape:
                transitions.append(Transition(diff_frames(post.px, b.px, opts.pixel_tolerance), idle=True,
                                              page=s.page.url_after if s.page else None))
            frames.release(s.frame_post)
            frames.release(nxt.frame_pre)
        frames.release(s.frame_post)
        dom_b = doms.get(s.page.dom_before if s.page else None, s, "page.dom_before")
        dom_a = doms.get(s.page.dom_after if s.page else None, s, "page.dom_after")
        pages.append(_page_facts(s, dom_b, dom_a, opts))
        if s.page:
            doms.release(s.page.dom_before)
            doms.release(s.page.dom_after)

    ambient: dict[str | None, Any] = {}
    if opts.perceptual.ambient:  # learned per page: a clock on one page says nothing about the next one
        for key in {t.page for t in transitions}:
            ambient[key] = learn_ambient([t for t in transitions if t.page == key])
    risks = [highrisk.classify(s.action.type, s.action.keys, s.reasoning, s.action.text, s.action.extra)
             for s in steps]
    effects = [perceptual.assess(s.action.type, s.action.keys, r, ev, ambient.get(_page_of(s)), opts.perceptual)
               for s, r, ev in zip(steps, risks, evidence)]
    preds = [_prediction(s, f, pg) for s, f, pg in zip(steps, effects, pages)]
    signals = [loops.StepSignal(s.index, s.action.type, _action_key(s), ev.pre_hash, ev.post_hash)
               for s, ev in zip(steps, evidence)]
    loop_findings = loops.find_loops(signals, opts.perceptual.threshold)
    gates = loops.no_observed_delta_after_waits(signals, opts.perceptual.threshold)
    contract_result, judges, ref_problems = _referee(run, ref.path, plan, frames, doms, pages)
    step_contract = {steps[plan.eval_pos].index: contract_result} if contract_result.verdict != "not_applicable" else {}
    rewards = _rewards(run, steps, evidence, effects, pages, preds, loop_findings, gates, opts, step_contract)
    ev_verdict = evidence_mod.decide(_evidence_steps(run, risks, effects, pages, loop_findings, gates, rewards))
    evaluator = referee.evaluator_verdict(run.outcome_score, opts.evaluator_pass)
    claim = _claim(run)
    verdict = referee.decide(contract_result, *judges, claim.claimed, ev_verdict, evaluator)

    step_rows = [_step_row(run, s, ev, r, f, pg, pr, lf, rw, g)
                 for s, ev, r, f, pg, pr, lf, rw, g in zip(steps, evidence, risks, effects, pages, preds,
                                                           loop_findings, rewards, gates)]
    problems = warnings + contract_problems + frames.problems + doms.problems + step_problems + ref_problems
    row = _run_row(run, ref, effects, step_rows, frames.decoded, problems)
    row.update(_verdict_columns(contract, contract_result, verdict, ev_verdict))
    row["evaluator_verdict"] = evaluator
    row["claim_reason"], row["claim_evidence"] = claim.reason, claim.evidence
    return RunResult(row, step_rows, frames.decoded, problems, ref.display)


def step_transition(s: Step, ev: ImageEvidence) -> Transition | None:
    """The frame pair of a step as evidence for ambient learning (:mod:`trajcheck.analyzers.ambient`), or
    None when it teaches nothing (no frames, one frame for both, or a navigation to another page). Used by
    the scorer and by the live verifier (:mod:`trajcheck.live`) alike."""
    if ev.change is None or s.frame_pre == s.frame_post or _navigated(s):
        return None
    return Transition(ev.change, idle=s.action.type in ("WAIT", "DONE"), region=ev.region, page=_page_of(s),
                      quiet=_witness_quiet(s),
                      focus_kept=bool(s.page and s.page.focus_before and s.page.focus_before == s.page.focus_after))


def _page_of(s: Step) -> str | None:
    """The page a step acted on (its URL before the action), the key of the ambient map it uses."""
    return s.page.url_before if s.page else None


def _witness_quiet(s: Step) -> bool:
    """The client witness recorded that the step caused no DOM mutation, no request and no URL change."""
    c = s.client
    return c is not None and c.did_dom_mutate is False and c.did_network_occur is False \
        and c.did_url_change is False


def _navigated(s: Step) -> bool:
    """The step moved to another URL: its frames show two pages, nothing ambient to learn."""
    return bool(s.page and s.page.url_before and s.page.url_after and s.page.url_before != s.page.url_after)


def _action_key(s: Step) -> loops.ActionKey:
    a = s.action
    return loops.action_key(a.type, a.x, a.y, a.keys, a.text, a.url, a.element)


def _prediction(s: Step, f: EffectFinding, pg: _PageFacts) -> PredictionFinding:
    if s.predict in ("frame_changed", "frame_stable"):
        held = predictions.check_frame_predicate(s.predict, f.content_changed)
        failed = () if held is not False else (s.predict,)
        return PredictionFinding(s.predict, held, failed, 1 if held is not None else 0, None, pg.kind)
    if s.expected:
        ran, failed = list(pg.expected_ran), list(pg.expected_failed)
        conf = predictions.expected_confidence(ran, failed, pg.url_as_expected, pg.kind)
        held = None if not ran else not failed
        return PredictionFinding("expected", held, tuple(failed), len(ran), conf, pg.kind)
    return PredictionFinding(None, None, (), 0, None, pg.kind)


def _answer_matches(run: Run, s: Step) -> bool | None:
    if not run.reference_answers:
        return None
    answer = " ".join(str(v) for v in (s.action.text, s.extra.get("extracted_content")) if v)
    if not answer:
        return None
    norm = lambda t: " ".join(t.lower().split())  # noqa: E731
    return any(norm(ref) in norm(answer) for ref in run.reference_answers)


def _rewards(run: Run, steps: tuple[Step, ...], evidence: list[ImageEvidence], effects: list[EffectFinding],
             pages: list[_PageFacts], preds: list[PredictionFinding], loop_findings: list[loops.LoopFinding],
             gates: list[bool], opts: ScoreOptions, contracts: dict[int, ContractResult]) -> list[reward.Reward]:
    """Score steps in order, each looking back only at earlier steps' lightweight evidence."""
    out: list[reward.Reward] = []
    failed_keys: list[loops.ActionKey] = []
    seen_frames: list[Hash64] = []
    seen_doms: set[str] = set()
    prev_failure: str | None = None
    last_observation: tuple[Hash64 | None, str | None] | None = None  # post state of the last observation step
    recent_confirm: list[bool] = []
    require = run.config.get("require_confirmation") is True
    t = opts.perceptual.threshold
    for s, ev, f, pg, pr, lf, gate in zip(steps, evidence, effects, pages, preds, loop_findings, gates):
        new_info: bool | None = None
        if ev.post_hash is not None or pg.dom_after_hash is not None:
            seen_pre = [ev.pre_hash] if ev.pre_hash is not None else []
            frame_new = ev.post_hash is not None and all(ev.post_hash - h > t for h in seen_frames + seen_pre)
            dom_new = pg.dom_after_hash is not None and pg.dom_after_hash not in seen_doms
            new_info = frame_new or dom_new
            if prev_failure in ("executor_stale_ref", "executor_not_found") and last_observation is not None \
                    and s.action.type in reward.OBSERVATION_TYPES:
                # A re-read after a stale reference is judged against the observation the stale
                # reference came from: the page may have re-rendered before the failing step.
                old_frame, old_dom = last_observation
                new_info = bool((ev.post_hash is not None and old_frame is not None and ev.post_hash - old_frame > t)
                                or (pg.dom_after_hash is not None and old_dom is not None
                                    and pg.dom_after_hash != old_dom))
        key = _action_key(s)
        inp = reward.RewardInput(
            action_type=s.action.type, signature=str(key), reasoning=s.reasoning, high_risk=f.checked,
            executor_ok=s.executor_ok, executor_error=s.executor_error, effect=f.action_effect_observed,
            content_changed=f.content_changed, frames_present=ev.change is not None,
            url_before=s.page.url_before if s.page else None, url_after=s.page.url_after if s.page else None,
            meaningful_change=pg.obs.meaningful_change, something_changed=pg.obs.something_changed,
            page_title=pg.title, page_text=pg.text, login_form_after=pg.login_form_after, new_information=new_info,
            contract_name=s.contract_name or (contracts[s.index].name if s.index in contracts else None),
            contract_passed=s.contract_passed if s.contract_passed is not None else (
                contracts[s.index].verdict == "pass" if s.index in contracts else None),
            prediction_held=pr.held, expected_state_reached=(pr.held if pr.prediction == "expected" else None),
            answer_matches=_answer_matches(run, s) if s.action.type == "DONE" or s.extra.get("extracted_content")
            else None,
            loop_position=lf.position, done_gate=gate, semantic_known=s.semantic is not None,
            require_confirmation=require, confirmed_before=any(recent_confirm[-3:]),
            repeats_failed_action=any(key.same(k) for k in failed_keys), previous_failure_kind=prev_failure)
        rw = reward.score_step(inp)
        out.append(rw)
        failed = s.executor_ok is False or bool(s.executor_error)
        if failed:
            failed_keys.append(key)
            prev_failure = reward.classify_error(s.executor_error)[0]
        else:
            prev_failure = None
        recent_confirm.append(reward.mentions_confirmation(s.reasoning))
        if s.action.type in reward.OBSERVATION_TYPES and not failed:
            last_observation = (ev.post_hash, pg.dom_after_hash)
        seen_frames += [h for h in (ev.pre_hash, ev.post_hash) if h is not None]
        if pg.dom_after_hash:
            seen_doms.add(pg.dom_after_hash)
    return out


def _picture(frames: _FrameCache, rel: str | None) -> Picture | None:
    f = frames.cache.get(rel) if rel else None
    return Picture(f.rgb, f.gray) if isinstance(f, Frame) else None


def _load_reference(base: Path, rel: str, run: Run, source: str, problems: list[Problem]) -> Picture | None:
    path = safe_join(base, rel)
    if path is None:
        problems.append(Problem("path_escapes_run", f"reference {rel!r} points outside {base}", run=run.run_id,
                                file=source, severity="warning", hint="keep references beside the contract"))
        return None
    try:
        f = decode(path)
    except FrameError as exc:
        problems.append(Problem(exc.slug, f"reference screenshot {rel!r}: {exc}", run=run.run_id, file=source,
                                severity="warning", hint="the check that needs it fails for missing evidence"))
        return None
    return Picture(f.rgb, f.gray)


def _evidence_steps(run: Run, risks: list[highrisk.HighRisk], effects: list[EffectFinding], pages: list[_PageFacts],
                    loop_findings: list[loops.LoopFinding], gates: list[bool],
                    rewards: list[reward.Reward]) -> list[evidence_mod.StepEvidence]:
    """What the evidence referee reads of each step, from the findings already computed."""
    out = []
    for s, r, f, pg, lf, g, rw in zip(run.steps, risks, effects, pages, loop_findings, gates, rewards):
        out.append(evidence_mod.StepEvidence(
            index=s.index, action_type=s.action.type, high_risk=r.high_risk, effect=f.action_effect_observed,
            content_changed=f.content_changed, url_before=s.page.url_before if s.page else None,
            url_after=s.page.url_after if s.page else None,
            reward_codes=tuple(c.split(":")[0] for c in rw.reasons), in_loop=lf.loop_id is not None, done_gate=g,
            messages_before=pg.messages_before, messages_after=pg.messages_after,
            answer_matches=_answer_matches(run, s) if s.action.type == "DONE" else None))
    return out


def _claim(run: Run) -> claims.Claim:
    done = next((s for s in reversed(run.steps) if s.action.type == "DONE"), None)
    if done is None:
        return claims.read_claim(False, run.outcome_status)
    return claims.read_claim(True, run.outcome_status, flag_failed=bool(done.action.extra.get("infeasible")),
                             task_completed=done.semantic.task_completed if done.semantic else None,
                             message=done.action.text or done.reasoning)


def _referee(run: Run, run_dir: Path, plan: _RefereePlan, frames: _FrameCache, doms: DomCache,
             pages: list[_PageFacts]) -> tuple[ContractResult, tuple[Judge | None, Judge | None], list[Problem]]:
    problems: list[Problem] = []
    final = _picture(frames, plan.frame_rel)
    snap = doms.cache.get(plan.dom_rel) if plan.dom_rel else None
    st = run.steps[plan.eval_pos]
    url = (st.page.url_after or st.page.url_before) if st.page else None
    result = NOT_APPLICABLE
    refs: list[tuple[str, Picture]] = []
    regions: list[list[int]] = []
    limits: dict[str, int] = {}
    if plan.contract is not None:
        c = plan.contract
        loaded = {rel: _load_reference(c.base, rel, run, c.source, problems) for rel in reference_paths(c.data)}
        state = ContractState(url=url, dom=snap.tree if snap else None, text=snap.text.text if snap else None,
                              frame=final, references=loaded,
                              frames_after={k: p for k, rel in plan.since.items() if (p := _picture(frames, rel))})
        result = contract_mod.evaluate(c.data, state)
        refs = [(rel, p) for rel in c.data.get("reference_screenshots", []) or [] if (p := loaded.get(rel))]
        regions = list(c.data.get("judge_regions", []) or [])
        for k, name in (("judge_max_global_distance", "max_global"), ("judge_max_region_distance", "max_region")):
            if k in c.data:
                limits[name] = c.data[k]
    for rel in plan.run_refs:
        p = _load_reference(run_dir, rel, run, "run.json", problems)
        if p is not None:
            refs.append((rel, p))
    for rel in [plan.frame_rel, *plan.since.values()]:
        frames.release(rel)
    if plan.dom_rel:
        doms.release(plan.dom_rel)
    reference = referee.reference_judge(final, refs, regions, **limits) if final is not None and refs else None
    recorded = None
    if run.judge and run.judge.verdict in ("pass", "fail"):
        recorded = Judge(run.judge.model or "recorded", run.judge.verdict, run.judge.score, run.judge.confidence,
                         tuple(run.judge.reasons), True)
    return result, referee.choose_judges(recorded, reference), problems


def _judge_json(j: Judge | None) -> str | None:
    if j is None:
        return None
    return _json({"model": j.model, "verdict": j.verdict, "score": j.score, "confidence": j.confidence,
                  "reasons": list(j.reasons), "recorded": j.recorded})


def _verdict_columns(contract: LoadedContract | None, result: ContractResult, v: Verdict,
                     ev: evidence_mod.EvidenceVerdict) -> dict[str, Any]:
    j = v.judge
    return {
        "det_verdict": result.verdict,
        "contract_name": result.name or (contract.source if contract else None),
        "contract_source": contract.source if contract else None,
        "contract_checks": _json([c.to_json() for c in result.checks]) if result.checks else None,
        "judge_model": j.model if j else None, "judge_verdict": j.verdict if j else None,
        "judge_score": j.score if j else None, "judge_confidence": j.confidence if j else None,
        "judge_reasons": list(j.reasons) if j else [], "judge_source": ("recorded" if j.recorded else "reference")
        if j else None,
        "judge_other": _judge_json(v.other_judge),
        "eval_final_verdict": v.final, "final_confidence": v.confidence, "verdict_reason": v.reason,
        "disagreement_reason": v.reason if v.final == "uncertain" else None,
        "claimed_success": v.claimed_success, "false_claim": v.false_claim,
        "verdict_source": v.source, "false_claim_basis": v.false_claim_basis,
        "evidence_verdict": ev.verdict, "evidence_reasons": list(ev.reasons), "evidence_confidence": ev.confidence,
        "lesson_promotable": v.lesson_promotable, "lesson_candidate": v.lesson,
    }


def _box(b: tuple[int, int, int, int] | None) -> list[int] | None:
    return list(b) if b else None


def _step_row(run: Run, s: Step, ev: ImageEvidence, risk: highrisk.HighRisk, f: EffectFinding, pg: _PageFacts,
              pr: PredictionFinding, lf: loops.LoopFinding, rw: reward.Reward, gate: bool) -> dict[str, Any]:
    cm = ev.change
    o = pg.obs
    agrees = None
    if s.recorded_effect is not None and f.action_effect_observed is not None:
        agrees = s.recorded_effect == f.action_effect_observed
    return {
        "run_id": run.run_id, "step_index": s.index,
        "action_type": s.action.type, "action_known": s.action.known,
        "action_x": s.action.x, "action_y": s.action.y, "action_keys": s.action.keys,
        "action_text": s.action.text, "action_url": s.action.url, "reasoning": s.reasoning,
        "frame_pre": s.frame_pre, "frame_post": s.frame_post,
        "frame_width": cm.width if cm else None, "frame_height": cm.height if cm else None,
        "frame_pre_phash": str(ev.pre_hash) if ev.pre_hash else None,
        "frame_post_phash": str(ev.post_hash) if ev.post_hash else None,
        "executor_ok": s.executor_ok, "executor_error": s.executor_error,
        "url_before": s.page.url_before if s.page else None,
        "url_after": s.page.url_after if s.page else None,
        "effect_high_risk": risk.high_risk, "effect_rule": risk.rule, "effect_keyword": risk.matched,
        "action_effect_observed": f.action_effect_observed, "effect_reason": f.reason,
        "action_effect_observed_seed": f.action_effect_observed_seed, "effect_seed_reason": f.seed_reason,
        "effect_global_distance": ev.global_distance, "effect_region_distance": ev.region_distance,
        "effect_point": ev.point, "effect_region_box": _box(ev.region),
        "effect_changed_px": cm.changed_px if cm else None,
        "effect_region_px": cm.region_px if cm else None,
        "effect_content_px": f.content_px,
        "effect_change_bbox": _box(cm.bbox) if cm else None,
        "effect_content_changed": f.content_changed,
        "effect_filtered": list(f.filtered),
        "effect_feedback": f.feedback, "effect_feedback_seed": f.feedback_seed,
        "recorded_action_effect_observed": s.recorded_effect, "recorded_feedback": s.recorded_feedback,
        "effect_agrees_recorded": agrees,
        "obs_observations": list(o.observations), "obs_url_changed": o.url_changed,
        "obs_dom_changed": o.dom_changed, "obs_meaningful_change": o.meaningful_change,
        "obs_something_changed": o.something_changed, "obs_success": o.success,
        "obs_goal_achieved": o.goal_achieved, "obs_low_confidence_completion": o.low_confidence_completion,
        "obs_confidence": o.confidence, "obs_reason": o.reason,
        "pred_prediction": pr.prediction, "pred_held": pr.held, "pred_failed_checks": list(pr.failed_checks),
        "pred_checks": pr.checks, "pred_confidence": pr.confidence, "pred_action_kind": pr.action_kind,
        "shared_frames": s.extra.get("shared_frames") is True,
        "loop_id": lf.loop_id, "loop_len": lf.loop_len, "reward_done_gate": gate,
        "reward_score": rw.score, "reward_class": rw.klass, "reward_reasons": list(rw.reasons),
        "reward_confidence": rw.confidence,
        "extra": _json(s.extra) if s.extra else None,
        "action_extra": _json(s.action.extra) if s.action.extra else None,
    }


def _run_row(run: Run, ref: RunRef, findings: list[EffectFinding], step_rows: list[dict[str, Any]],
             n_frames: int, problems: list[Problem]) -> dict[str, Any]:
    row = _empty_run_row(run.run_id, str(ref.path), run.source_format)
    summary = perceptual.perceptual_summary(findings)
    seed_summary = perceptual.perceptual_summary(findings, seed=True)
    judge = None
    if run.judge:
        judge = {"model": run.judge.model, "verdict": run.judge.verdict, "score": run.judge.score,
                 "confidence": run.judge.confidence, "reasons": list(run.judge.reasons)}
    agree = sum(1 for r in step_rows if r["effect_agrees_recorded"] is True)
    disagree = sum(1 for r in step_rows if r["effect_agrees_recorded"] is False)
    row.update({
        "warnings": [str(p) for p in problems],
        "task_id": run.task_id, "trial": run.trial, "goal": run.goal,
        "agent_name": run.agent_name, "agent_model": run.agent_model,
        "config": _json(run.config) or "{}",
        "config_perceptual_verifier": run.perceptual_verifier_recorded,
        "config_require_confirmation": run.config.get("require_confirmation")
        if isinstance(run.config.get("require_confirmation"), bool) else None,
        "screen_width": run.screen_width, "screen_height": run.screen_height,
        "started_at": run.started_at, "outcome_status": run.outcome_status,
        "outcome_score": run.outcome_score, "outcome_judge": _json(judge),
        "n_steps": len(run.steps), "n_frames": n_frames,
        "perceptual_summary": json.dumps(summary, sort_keys=True),
        "effect_checked": summary.get("checked", 0), "effect_no_effect": summary.get("no_effect", 0),
        "effect_checked_seed": seed_summary.get("checked", 0),
        "effect_no_effect_seed": seed_summary.get("no_effect", 0),
        "effect_warning_steps": [s["step_index"] for s in step_rows if s["effect_feedback"]],
        "effect_recorded_agree": agree, "effect_recorded_disagree": disagree,
        **_reward_summary(step_rows),
        "extra": _json(run.extra) if run.extra else None,
    })
    return row


_BLOCKING_CODES = ("blocking_page", "captcha", "auth_redirect")


def _reward_summary(step_rows: list[dict[str, Any]]) -> dict[str, Any]:
    scores = [r["reward_score"] for r in step_rows]
    first_block = next((r["step_index"] for r in step_rows
                        if any(c.split(":")[0] in _BLOCKING_CODES for c in r["reward_reasons"])), None)
    held = [r["pred_held"] for r in step_rows if r["pred_held"] is not None]
    out: dict[str, Any] = {
        "reward_total": round(sum(scores), 4) if scores else None,
        "reward_mean": round(sum(scores) / len(scores), 4) if scores else None,
        "reward_first_blocking_step": first_block,
        "longest_loop": max((r["loop_len"] or 0 for r in step_rows), default=0),
        "loops": len({r["loop_id"] for r in step_rows if r["loop_id"] is not None}),
        "reward_done_gate": any(r["reward_done_gate"] for r in step_rows),
        "pred_checked": len(held),
        "pred_accuracy": round(sum(held) / len(held), 4) if held else None,
        "obs_no_change_steps": sum(1 for r in step_rows if r["obs_something_changed"] is False),
    }
    for k in reward.CLASSES:
        out[f"reward_{k}"] = sum(1 for r in step_rows if r["reward_class"] == k)
    return out


@dataclass
class ScoreReport:
    results: list[RunResult]  # every scored run, in discovery order (empty when a sink took them)
    problems: list[Problem]  # problems of the arguments themselves (a path that does not exist)
    skipped: list[str] = field(default_factory=list)  # run_ids whose input digest did not change
    removed: list[str] = field(default_factory=list)  # run_ids whose directory is gone from a scored folder
    scored: int = 0  # runs scored (ok or invalid)
    frames: int = 0  # distinct frames decoded
    invalid: list[RunResult] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)  # each scored run's row (no steps)


def _worker(args: tuple[RunRef, ScoreOptions, str]) -> RunResult:
    return score_run(*args)


def score_paths(paths: Iterable[str | os.PathLike[str]], opts: ScoreOptions | None = None, jobs: int | None = None,
                on_found: Callable[[int], None] | None = None,
                on_result: Callable[[RunResult], None] | None = None,
                input_format: str | None = None,
                previous: Iterable[Previous] | None = None,
                sink: Callable[[RunResult], None] | None = None,
                engine: str = "local", scheduler: str | None = None) -> ScoreReport:
    """Discover and score every run under ``paths``, in parallel over ``jobs`` processes.

    Results come back in discovery order whatever the order of completion, so the
    same input gives the same ledger. With ``previous`` (what a ledger holds), a run
    whose input digest is unchanged is skipped, and a run the ledger found under one
    of ``paths`` whose directory is gone is reported in ``removed``. With ``sink``,
    each result is handed over as it is ready (in order) instead of being kept.
    ``engine="dask"`` scores on a dask.distributed cluster (``scheduler`` is its
    address; without one, a local cluster of ``jobs`` worker processes); the rows are
    the same as the local engine's.
    """
    opts = opts or ScoreOptions()
    paths = list(paths)
    refs, problems = discover(paths, input_format)
    fingerprint = options_fingerprint(opts, input_format)
    plan = incremental.plan(paths, refs, previous, fingerprint)
    refs, skipped, removed, known = plan.todo, plan.skipped, plan.removed, plan.known
    if on_found:
        on_found(len(refs))
    report = ScoreReport([], problems, skipped, removed)
    seen: dict[str, str] = dict(known)  # run_id -> path: the first run to claim an id keeps it
    if engine == "dask":
        from .engine_dask import dask_ordered

        results = dask_ordered(refs, opts, fingerprint, jobs or os.cpu_count() or 1, scheduler)
    elif engine == "local":
        results = _ordered(refs, opts, fingerprint, jobs or os.cpu_count() or 1)
    else:
        raise ValueError(f"unknown engine {engine!r}: local or dask")
    for res in results:
        res = _dedupe_one(res, seen)
        report.scored += 1
        report.frames += res.frames
        if not res.ok:
            report.invalid.append(res)
        report.summaries.append({k: res.run.get(k) for k in SUMMARY_KEYS})
        if sink is not None:
            sink(res)
        else:
            report.results.append(res)
        if on_result:
            on_result(res)
    return report


#: The run-row keys a report keeps for every run (the full rows go to the sink).
SUMMARY_KEYS = ("run_id", "status", "error", "n_steps", "effect_checked", "effect_no_effect", "effect_no_effect_seed",
                "warnings", "outcome_status")

#: Runs in flight per worker process: enough to keep workers busy, few enough to bound memory.
IN_FLIGHT_PER_WORKER = 4


def _ordered(refs: list[RunRef], opts: ScoreOptions, fingerprint: str, jobs: int) -> Iterator[RunResult]:
    """Score ``refs`` over ``jobs`` processes and yield the results in discovery order, with at
    most IN_FLIGHT_PER_WORKER runs per worker in flight (memory stays flat however many runs)."""
    if jobs <= 1 or len(refs) <= 1:
        for ref in refs:
            try:
                res = score_run(ref, opts, fingerprint)
            except Exception as exc:  # noqa: BLE001  (as in a worker process: a crash costs one run)
                res = invalid_result(ref.display, str(ref.path), [Problem(
                    "internal_error", f"{type(exc).__name__}: {exc}", run=ref.display,
                    hint="please report this with the run attached")], ref.reader)
            yield res
        return
    with ProcessPoolExecutor(max_workers=min(jobs, len(refs))) as pool:
        todo = iter(refs)
        window: deque[tuple[RunRef, Future[RunResult]]] = deque()
        for ref in itertools.islice(todo, jobs * IN_FLIGHT_PER_WORKER):
            window.append((ref, pool.submit(_worker, (ref, opts, fingerprint))))
        while window:
            ref, fut = window.popleft()
            try:
                res = fut.result()
            except Exception as exc:  # a crashed worker costs one run, never the batch
                res = invalid_result(ref.display, str(ref.path), [Problem(
                    "internal_error", f"{type(exc).__name__}: {exc}", run=ref.display,
                    hint="please report this with the run attached")], ref.reader)
            nxt = next(todo, None)
            if nxt is not None:
                window.append((nxt, pool.submit(_worker, (nxt, opts, fingerprint))))
            yield res


def _dedupe_one(r: RunResult, seen: dict[str, str]) -> RunResult:
    """Two runs with one run_id: the first keeps it, the second becomes invalid naming both paths."""
    rid = r.run["run_id"]
    path = r.run["run_path"]
    if rid in seen:
        return invalid_result(r.display or path, path, [Problem(
            "duplicate_run_id", f"run_id {rid!r} is already used by the run at {seen[rid]}; this run at "
            f"{path} was not scored", run=rid, file="run.json", field="run_id",
            hint="give every run its own run_id")], r.run["source_format"])
    seen[rid] = path
    return r


