"""Declarative outcome contracts, evaluated on a run's final state (pure).

A contract is data (``contract.json``, validated by ``schemas/contract.schema.json``);
this module evaluates its checks against the state the pipeline hands it: the
last URL, the last DOM snapshot (parsed), the final frame, the frames after
earlier steps, and decoded reference images, each with the pHashes of the regions
its checks compare, computed beforehand (:class:`Picture`). Each check returns structured
evidence, so a verdict can always be traced to pixels or elements.

A check holds (``passed`` True), fails (False), or is *undecided* (None): its evidence is absent (no DOM
snapshot, no URL, no frame, no reference) or it cannot be evaluated as written (a selector that does not
parse, a region outside the frame). Missing evidence is not evidence of failure: an undecided check never
fails a contract. The contract fails when a check fails, is ``uncertain`` when no check fails and one is
undecided, and passes when every check holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..base.box import Box
from ..base.hashing import Hash64
from . import patterns, screencheck
from .screencheck import ScreenEvidence

#: A grid cell is active when its colour is at least this far (RGB distance) from the grid's baseline.
GRID_ACTIVE_MIN = 40.0
#: Default minimum detection margin for a grid check to pass.
GRID_MIN_MARGIN = 0.2
#: Share of a cell trimmed on each side before averaging its colour (borders, gaps, labels).
GRID_INSET = 0.25
#: Default pHash distance for region_matches.
REGION_MATCH_DISTANCE = 4


#: The checks that compare a region's pHash between two pictures.
REGION_CHECKS = ("region_matches", "region_changed", "region_unchanged")


@dataclass(frozen=True)
class Picture:
    """A decoded frame as the contract checks and the reference judge see it: its pixels, and the pHashes that
    the loading stage computed for it (the whole frame's, and each region's of :func:`hashed_regions` that lies
    inside it). Hashing is not done here: it reads the resize tables' on-disk cache (:mod:`trajcheck.base.resample`),
    and the analyzers do no I/O."""

    rgb: np.ndarray
    phash: Hash64
    regions: Mapping[Box, Hash64] = field(default_factory=dict)

    def region_hash(self, box: Box) -> Hash64:
        """pHash of the crop ``box`` (left, top, right, bottom), as :meth:`trajcheck.media.frames.Frame.region_hash`
        computed it; a KeyError for a box that :func:`hashed_regions` does not name (or outside the picture)."""
        return self.regions[box]


def hashed_regions(contract: dict[str, Any] | None) -> tuple[Box, ...]:
    """Every region whose pHash the contract's checks and the reference judge compare (what the loading stage
    hashes in each picture): the ``region`` of each region check, and the ``judge_regions``."""
    if contract is None:
        return ()
    boxes = [c["region"] for c in contract.get("checks", []) if c.get("type") in REGION_CHECKS and "region" in c]
    boxes += contract.get("judge_regions", []) or []
    return tuple(dict.fromkeys(Box.from_xywh(*b) for b in boxes))


@dataclass
class ContractState:
    url: str | None = None
    dom: Any | None = None  # a parsed DOM tree (selectolax) of the evaluated state
    text: str | None = None  # the page's text
    frame: Picture | None = None
    frames_after: dict[int, Picture] = field(default_factory=dict)  # state after step k (0: before the first step)
    references: dict[str, Picture | None] = field(default_factory=dict)  # decoded reference images by path
    #: What OCR read for each check decided from the screen (:func:`trajcheck.analyzers.screencheck.reads_screen`),
    #: by the check's position (1-based); a check absent here was not read (OCR off or not installed).
    screen: dict[int, ScreenEvidence] = field(default_factory=dict)
    answer: str | None = None  # the agent's final answer (its last DONE step's text)
    screen_missing: str = "OCR did not read the screen"  # why a check decided from the screen has no reads
    #: Actions that change the screen taken after the DOM snapshot (``dom``, ``text``) and after the URL (``url``)
    #: were recorded: the judged step's snapshot from before its own action. A check they would decide is
    #: undecided: the final state those actions led to was not recorded.
    dom_stale: int = 0
    url_stale: int = 0


@dataclass(frozen=True)
class CheckResult:
    type: str
    name: str
    passed: bool | None  # None: undecided (its evidence is absent, or it cannot be evaluated as written)
    evidence: dict[str, Any]

    @property
    def undecided(self) -> bool:
        return self.passed is None

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "passed": self.passed, "evidence": self.evidence}


@dataclass(frozen=True)
class ContractResult:
    verdict: str  # pass | fail | uncertain (a check undecided, none failed) | not_applicable
    name: str | None
    checks: tuple[CheckResult, ...] = ()

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that failed (an undecided check is not among them)."""
        return [c for c in self.checks if c.passed is False]

    @property
    def undecided(self) -> list[CheckResult]:
        """The checks that could not be decided, each naming what was missing (``evidence["undecided"]``)."""
        return [c for c in self.checks if c.passed is None]


NOT_APPLICABLE = ContractResult("not_applicable", None)


def _box_ok(box: list[int], pic: Picture) -> bool:
    x, y, w, h = box
    H, W = pic.rgb.shape[:2]
    return w > 0 and h > 0 and x + w <= W and y + h <= H


def _missing(kind: str, name: str, what: str) -> CheckResult:
    """An undecided check: its evidence is absent."""
    return CheckResult(kind, name, None, {"undecided": f"missing evidence: {what}"})


def _unusable(kind: str, name: str, why: str, **evidence: Any) -> CheckResult:
    """An undecided check: it cannot be evaluated as written (the contract needs fixing, the run is not at fault)."""
    return CheckResult(kind, name, None, {"undecided": f"cannot evaluate: {why}", **evidence})


def contract_verdict(checks: tuple[CheckResult, ...] | list[CheckResult]) -> str:
    """fail when a check failed; uncertain when none failed and one is undecided; pass when every check holds."""
    if any(c.passed is False for c in checks):
        return "fail"
    return "uncertain" if any(c.passed is None for c in checks) else "pass"


def grid_cells(pic: Picture, box: list[int], rows: int, cols: int) -> np.ndarray:
    """Mean RGB of each cell's inner area: array (rows, cols, 3)."""
    x, y, w, h = box
    cw, ch = w / cols, h / rows
    out = np.zeros((rows, cols, 3), dtype=np.float64)
    for r in range(rows):
        for c in range(cols):
            x0 = int(round(x + c * cw + cw * GRID_INSET))
            x1 = max(x0 + 1, int(round(x + (c + 1) * cw - cw * GRID_INSET)))
            y0 = int(round(y + r * ch + ch * GRID_INSET))
            y1 = max(y0 + 1, int(round(y + (r + 1) * ch - ch * GRID_INSET)))
            out[r, c] = pic.rgb[y0:y1, x0:x1].reshape(-1, 3).mean(axis=0)
    return out


def _median_of_rows(values: np.ndarray) -> np.ndarray:
    """``np.median(values, axis=0)`` of a float (N, K) array without NaNs, computed as numpy computes it (the
    middle value, or the mean of the two middle values: their sum over 2), without its NaN check, which
    imports ``numpy.ma`` (0.01-0.02 s in every scoring process) on first use."""
    ordered = np.sort(values, axis=0)
    mid = ordered.shape[0] // 2
    if ordered.shape[0] % 2:
        return ordered[mid].astype(np.float64)
    return (ordered[mid - 1] + ordered[mid]) / 2.0


def detect_active(cells: np.ndarray, row: int) -> tuple[list[int], float, list[float]]:
    """Active cells of ``row`` (0-based columns), the detection margin in [0, 1], and
    each cell's distance from the grid's inactive baseline.

    The baseline is the median colour over every cell of the grid (inactive cells
    are the majority of a step grid). A cell is active when its distance from the
    baseline is above the largest gap in the row's sorted distances and at least
    GRID_ACTIVE_MIN; the margin is that gap relative to the largest distance (how
    cleanly active and inactive cells separate).
    """
    baseline = _median_of_rows(cells.reshape(-1, 3))
    d = np.linalg.norm(cells[row] - baseline, axis=1)
    order = np.sort(d)
    top = float(order[-1])
    if top < GRID_ACTIVE_MIN:
        return [], float(min(1.0, (GRID_ACTIVE_MIN - top) / GRID_ACTIVE_MIN)), [round(float(v), 1) for v in d]
    if float(order[0]) >= GRID_ACTIVE_MIN:
        return list(range(len(d))), float(min(1.0, (order[0] - GRID_ACTIVE_MIN) / GRID_ACTIVE_MIN)), \
            [round(float(v), 1) for v in d]
    gaps = np.diff(order)
    k = int(np.argmax(gaps))
    thr = max(GRID_ACTIVE_MIN, (order[k] + order[k + 1]) / 2)
    active = [i for i, v in enumerate(d) if v > thr]
    inactive = [v for v in d if v <= thr]
    margin = (min(d[i] for i in active) - max(inactive)) / top if active and inactive else 1.0
    return active, float(max(0.0, min(1.0, margin))), [round(float(v), 1) for v in d]


def _grid(chk: dict[str, Any], name: str, st: ContractState) -> CheckResult:
    if st.frame is None:
        return _missing("grid", name, "no final frame")
    box = chk["box"]
    if not _box_ok(box, st.frame):
        return _unusable("grid", name, f"grid box {box} is outside the frame")
    rows, cols, row = chk["rows"], chk["cols"], chk["target_row"] - 1
    if row >= rows:
        return _unusable("grid", name, f"target_row {row + 1} > rows {rows}")
    active0, margin, dist = detect_active(grid_cells(st.frame, box, rows, cols), row)
    active = [c + 1 for c in active0]  # 1-based, like the steps
    required = sorted(set(chk["required_steps"]))
    forbidden = chk.get("forbidden_steps")
    forbidden = (sorted(set(forbidden)) if forbidden is not None
                 else [s for s in range(1, cols + 1) if s not in required])
    missing = [s for s in required if s not in active]
    wrong = [s for s in active if s in forbidden]
    min_margin = chk.get("min_margin", GRID_MIN_MARGIN)
    passed = not missing and not wrong and margin >= min_margin
    return CheckResult("grid", name, passed, {
        "active_steps": active, "required_steps": required, "missing_required": missing,
        "forbidden_active": wrong, "margin": round(margin, 3), "min_margin": min_margin, "distances": dist})


def evaluate(contract: dict[str, Any], st: ContractState) -> ContractResult:
    """Evaluate every check (see :func:`contract_verdict` for how they make the contract's verdict)."""
    results = []
    for i, chk in enumerate(contract["checks"], start=1):
        kind = chk["type"]
        name = chk.get("name") or f"{kind}#{i}"
        try:
            if kind == "answer_matches":
                results.append(CheckResult(kind, name, *screencheck.answer_check(chk, st.answer)))
            elif screencheck.reads_screen(chk, st.text is not None):
                ev = st.screen.get(i) or ScreenEvidence(missing=st.screen_missing)
                results.append(CheckResult(kind, name, *screencheck.evaluate(kind, chk, ev)))
            else:
                results.append(_fresh(_check(kind, name, chk, st), st))
        except patterns.PatternError as exc:
            results.append(_unusable(kind, name, f"bad pattern {chk.get('pattern')!r}: {exc}"))
        except patterns.PatternTimeout as exc:
            results.append(_unusable(kind, name, str(exc)))
    return ContractResult(contract_verdict(results), contract.get("name"), tuple(results))


#: The checks decided from the final DOM snapshot or the final URL (:func:`_fresh`).
_FROM_DOM = ("element_exists", "element_absent", "element_text", "text_present", "text_absent", "text_matches")


def _fresh(res: CheckResult, st: ContractState) -> CheckResult:
    """``res``, undecided when its DOM snapshot or URL was recorded before actions that changed the screen
    (:attr:`ContractState.dom_stale`): what it read is kept in its evidence, with the count of unseen actions."""
    n = st.url_stale if res.type == "url_matches" else st.dom_stale if res.type in _FROM_DOM else 0
    if not n or res.passed is None:
        return res
    what = "URL" if res.type == "url_matches" else "DOM snapshot"
    return CheckResult(res.type, res.name, None, res.evidence | {
        "actions_unseen": n, "undecided": f"missing evidence: {n} action{'s' * (n != 1)} after the last {what}: "
                                          "the final state was not recorded"})


def _check(kind: str, name: str, chk: dict[str, Any], st: ContractState) -> CheckResult:
    if kind == "url_matches":
        if st.url is None:
            return _missing(kind, name, "no URL recorded")
        ok = patterns.search(chk["pattern"], st.url) is not None
        return CheckResult(kind, name, ok, {"url": st.url, "pattern": chk["pattern"]})
    if kind in ("element_exists", "element_absent", "element_text"):
        if st.dom is None:
            return _missing(kind, name, "no DOM snapshot of the final state")
        try:
            nodes = st.dom.css(chk["selector"])
        except Exception as exc:  # noqa: BLE001  (selectolax: unparseable selector)
            return _unusable(kind, name, f"bad selector {chk['selector']!r}: {exc}")
        if kind == "element_exists":
            return CheckResult(kind, name, bool(nodes), {"selector": chk["selector"], "matches": len(nodes)})
        if kind == "element_absent":
            return CheckResult(kind, name, not nodes, {"selector": chk["selector"], "matches": len(nodes)})
        texts = [" ".join((n.text(deep=True, separator=" ") or "").split()) for n in nodes]
        ok = any(patterns.search(chk["pattern"], t) for t in texts)
        return CheckResult(kind, name, ok, {"selector": chk["selector"], "pattern": chk["pattern"],
                                            "texts": [t[:120] for t in texts[:5]]})
    if kind in ("text_present", "text_absent"):
        if st.text is None:
            return _missing(kind, name, "no DOM snapshot of the final state")
        found = chk["text"].lower() in st.text.lower()
        return CheckResult(kind, name, found if kind == "text_present" else not found,
                           {"text": chk["text"], "found": found})
    if kind == "text_matches":
        if st.text is None:
            return _missing(kind, name, "no DOM snapshot of the final state")
        m = patterns.search(chk["pattern"], " ".join(st.text.split()))
        return CheckResult(kind, name, m is not None,
                           {"pattern": chk["pattern"], "match": m.group(0)[:120] if m else None})
    if kind == "region_matches":
        ref = st.references.get(chk["reference"])
        if st.frame is None or ref is None:
            return _missing(kind, name, "no final frame" if st.frame is None else f"reference {chk['reference']}")
        box = chk["region"]
        if not _box_ok(box, st.frame) or not _box_ok(box, ref):
            return _unusable(kind, name, f"region {box} is outside the frame or the reference")
        d = st.frame.region_hash(Box.from_xywh(*box)) - ref.region_hash(Box.from_xywh(*box))
        limit = chk.get("max_distance", REGION_MATCH_DISTANCE)
        return CheckResult(kind, name, d <= limit, {"region": box, "distance": d, "max_distance": limit,
                                                    "reference": chk["reference"]})
    if kind in ("region_changed", "region_unchanged"):
        then = st.frames_after.get(chk["since_step"])
        if st.frame is None or then is None:
            return _missing(kind, name,
                            f"no frame after step {chk['since_step']}" if then is None else "no final frame")
        box = chk["region"]
        if not _box_ok(box, st.frame) or not _box_ok(box, then):
            return _unusable(kind, name, f"region {box} is outside the frame")
        x, y, w, h = box
        px = int(np.count_nonzero((st.frame.rgb[y:y + h, x:x + w] != then.rgb[y:y + h, x:x + w]).any(axis=2)))
        d = st.frame.region_hash(Box.from_xywh(*box)) - then.region_hash(Box.from_xywh(*box))
        changed = px > 0
        return CheckResult(kind, name, changed if kind == "region_changed" else not changed,
                           {"region": box, "since_step": chk["since_step"], "changed_px": px, "distance": d})
    if kind == "grid":
        return _grid(chk, name, st)
    return _unusable(kind, name, f"unknown check type {kind!r}")
