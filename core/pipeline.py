"""Scoring: run directory -> typed records -> evidence -> analyzers -> ledger rows.

One run is the unit of work. A worker reads the run, decodes each distinct frame
file exactly once (consecutive steps usually share a frame), derives the global
hash, the region hashes and the exact pixel difference from that one decode,
releases each frame as soon as no later step needs it, and returns plain rows.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from trajcheck.analyzers import highrisk, perceptual
from trajcheck.analyzers.ambient import Transition, learn_ambient
from trajcheck.analyzers.perceptual import EffectFinding, ImageEvidence, PerceptualOptions
from trajcheck.analyzers.pixeldiff import diff_frames, no_change
from trajcheck.schemas.ledger import SCHEMA_VERSION
from trajcheck.schemas.records import Run, Step

from . import __version__
from .errors import Problem, RunFormatError
from .frames import Frame, FrameError, decode, region_box, to_frame
from .discovery import RunRef, discover, get_reader
from .rundir import safe_join


@dataclass(frozen=True)
class ScoreOptions:
    perceptual: PerceptualOptions = field(default_factory=PerceptualOptions)
    pixel_tolerance: int = 0  # a pixel changed when a channel differs by more than this


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
    """Decoded frames of one run, each decoded once and dropped after its last use."""

    def __init__(self, run: Run, run_dir: Path, uses: Counter[str]):
        self.run = run
        self.run_dir = run_dir
        self.uses = uses
        self.cache: dict[str, Frame | FrameError] = {}
        self.decoded = 0
        self.problems: list[Problem] = []
        self._reported: set[str] = set()

    def get(self, rel: str | None, step: Step, field_name: str) -> Frame | FrameError | None:
        if rel is None:
            return None
        if rel not in self.cache:
            path = safe_join(self.run_dir, rel)
            if rel in self.run.inline_frames:
                try:
                    self.cache[rel] = decode(Path(rel), self.run.inline_frames[rel])
                    self.decoded += 1
                except FrameError as exc:
                    self.cache[rel] = exc
            elif path is None:  # checked at read time already; keep the guard where the file is opened
                self.cache[rel] = FrameError("frame_unreadable", "path escapes the run directory")
            else:
                try:
                    self.cache[rel] = decode(path)
                    self.decoded += 1
                except FrameError as exc:
                    self.cache[rel] = exc
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


def _step_evidence(run: Run, step: Step, pre: Frame | FrameError | None, post: Frame | FrameError | None,
                   tolerance: int, problems: list[Problem]) -> ImageEvidence:
    if not isinstance(pre, Frame) or not isinstance(post, Frame):
        bad = pre if isinstance(pre, FrameError) else post if isinstance(post, FrameError) else None
        return ImageEvidence(
            pre_hash=pre.phash if isinstance(pre, Frame) else None,
            post_hash=post.phash if isinstance(post, Frame) else None,
            problem=bad.slug if bad else "frames_missing")
    region = None
    point = "none"
    a = step.action
    if a.has_point:
        fx, fy, sx, sy = to_frame(a.x, a.y, (run.screen_width, run.screen_height),  # type: ignore[arg-type]
                                  (post.width, post.height))
        region = region_box(fx, fy, post.width, post.height)
        point = "in_frame" if region else "outside_frame"
        if region is None:
            scale = f" (scaled x{sx:g} from screen coordinates)" if (sx, sy) != (1.0, 1.0) else ""
            problems.append(Problem(
                "coords_outside_frame",
                f"action point ({a.x:g}, {a.y:g}) is outside the {post.width}x{post.height} frame{scale}; "
                "only the global hash decides", run=run.run_id, file=step.source, line=step.line,
                field="action.x", severity="warning",
                hint="check run.json screen {width, height} against the frame size"))
    same_size = (pre.width, pre.height) == (post.width, post.height)
    if step.frame_pre == step.frame_post:
        change = no_change(post.width, post.height, region)  # one file for both: nothing to compare
    else:
        change = diff_frames(pre.rgb, post.rgb, tolerance, region if same_size else None)
    return ImageEvidence(
        pre_hash=pre.phash, post_hash=post.phash, region=region,
        pre_region_hash=pre.region_hash(region) if region and same_size else None,
        post_region_hash=post.region_hash(region) if region else None,
        change=change, point=point)


def score_run(ref: RunRef, opts: ScoreOptions) -> RunResult:
    """Score one run directory; never raises for bad input (the row says what is wrong)."""
    try:
        return _score_run(ref, opts)
    except RunFormatError as exc:
        return invalid_result(ref.display, str(ref.path), exc.problems)
    except RecursionError:
        return invalid_result(ref.display, str(ref.path), [Problem(
            "json_too_deep", "a record is nested too deeply to read", run=ref.display,
            hint="flatten the run's JSON")])
    except MemoryError:
        return invalid_result(ref.display, str(ref.path), [Problem(
            "out_of_memory", "ran out of memory reading this run", run=ref.display,
            hint="score it alone with --jobs 1, or check its frames' sizes")])


def _score_run(ref: RunRef, opts: ScoreOptions) -> RunResult:
    run, warnings = get_reader(ref.reader).read(ref.path, ref.display)
    steps = run.steps
    uses: Counter[str] = Counter()
    for i, s in enumerate(steps):
        uses.update(r for r in (s.frame_pre, s.frame_post) if r)
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if nxt is not None and s.frame_post and nxt.frame_pre and s.frame_post != nxt.frame_pre:
            uses.update([s.frame_post, nxt.frame_pre])  # the gap between two screenshots
    frames = _FrameCache(run, ref.path, uses)
    evidence: list[ImageEvidence] = []
    transitions: list[Transition] = []
    step_problems: list[Problem] = []
    for i, s in enumerate(steps):
        pre = frames.get(s.frame_pre, s, "frames.pre")
        post = frames.get(s.frame_post, s, "frames.post")
        ev = _step_evidence(run, s, pre, post, opts.pixel_tolerance, step_problems)
        evidence.append(ev)
        if ev.change is not None and s.frame_pre != s.frame_post:
            transitions.append(Transition(ev.change, idle=s.action.type in ("WAIT", "DONE"), region=ev.region))
        frames.release(s.frame_pre)
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if nxt is not None and s.frame_post and nxt.frame_pre and s.frame_post != nxt.frame_pre:
            a = post
            b = frames.get(nxt.frame_pre, nxt, "frames.pre")
            if isinstance(a, Frame) and isinstance(b, Frame) and a.rgb.shape == b.rgb.shape:
                transitions.append(Transition(diff_frames(a.rgb, b.rgb, opts.pixel_tolerance), idle=True))
            frames.release(s.frame_post)
            frames.release(nxt.frame_pre)
        frames.release(s.frame_post)

    ambient = learn_ambient(transitions) if opts.perceptual.ambient else None
    findings: list[EffectFinding] = []
    step_rows = []
    for s, ev in zip(steps, evidence):
        risk = highrisk.classify(s.action.type, s.action.keys, s.reasoning)
        f = perceptual.assess(s.action.type, s.action.keys, risk, ev, ambient, opts.perceptual)
        findings.append(f)
        step_rows.append(_step_row(run, s, ev, risk, f))

    problems = warnings + frames.problems + step_problems
    row = _run_row(run, ref, findings, step_rows, frames.decoded, problems)
    return RunResult(row, step_rows, frames.decoded, problems, ref.display)


def _box(b: tuple[int, int, int, int] | None) -> list[int] | None:
    return list(b) if b else None


def _step_row(run: Run, s: Step, ev: ImageEvidence, risk: highrisk.HighRisk, f: EffectFinding) -> dict[str, Any]:
    cm = ev.change
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
        "extra": _json(s.extra) if s.extra else None,
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
        "extra": _json(run.extra) if run.extra else None,
    })
    return row


@dataclass
class ScoreReport:
    results: list[RunResult]
    problems: list[Problem]  # problems of the arguments themselves (a path that does not exist)

    @property
    def frames(self) -> int:
        return sum(r.frames for r in self.results)

    @property
    def invalid(self) -> list[RunResult]:
        return [r for r in self.results if not r.ok]


def _worker(args: tuple[RunRef, ScoreOptions]) -> RunResult:
    return score_run(*args)


def score_paths(paths: Iterable[str | os.PathLike[str]], opts: ScoreOptions | None = None, jobs: int | None = None,
                on_found: Callable[[int], None] | None = None,
                on_result: Callable[[RunResult], None] | None = None,
                input_format: str | None = None) -> ScoreReport:
    """Discover and score every run under ``paths``, in parallel over ``jobs`` processes.

    Results come back in discovery order whatever the order of completion, so the
    same input gives the same ledger.
    """
    opts = opts or ScoreOptions()
    refs, problems = discover(paths, input_format)
    if on_found:
        on_found(len(refs))
    jobs = jobs or os.cpu_count() or 1
    results: list[RunResult | None] = [None] * len(refs)
    if jobs <= 1 or len(refs) <= 1:
        for i, ref in enumerate(refs):
            results[i] = score_run(ref, opts)
            if on_result:
                on_result(results[i])  # type: ignore[arg-type]
    else:
        with ProcessPoolExecutor(max_workers=min(jobs, len(refs))) as pool:
            futures = {pool.submit(_worker, (ref, opts)): i for i, ref in enumerate(refs)}
            for fut in as_completed(futures):
                i = futures[fut]
                try:
                    res = fut.result()
                except Exception as exc:  # a crashed worker costs one run, never the batch
                    ref = refs[i]
                    res = invalid_result(ref.display, str(ref.path), [Problem(
                        "internal_error", f"{type(exc).__name__}: {exc}", run=ref.display,
                        hint="please report this with the run attached")])
                results[i] = res
                if on_result:
                    on_result(res)
    final = _dedupe([r for r in results if r is not None])
    return ScoreReport(final, problems)


def _dedupe(results: list[RunResult]) -> list[RunResult]:
    """Two runs with one run_id: the first keeps it, the second becomes invalid naming both paths."""
    seen: dict[str, str] = {}
    out = []
    for r in results:
        rid = r.run["run_id"]
        if rid in seen:
            path = r.run["run_path"]
            out.append(invalid_result(r.display or path, path, [Problem(
                "duplicate_run_id", f"run_id {rid!r} is already used by the run at {seen[rid]}; this run at "
                f"{path} was not scored", run=rid, file="run.json", field="run_id",
                hint="give every run its own run_id")], r.run["source_format"]))
            continue
        seen[rid] = r.run["run_path"]
        out.append(r)
    return out
