"""``trajcheck draft-contract``: the first and the final screen of a scored run, read again from its files.

The ledger says where the run is (``runs.run_path``) and what OCR read on its final frame
(``runs.screen_text_final``); the run's own files give its URLs, titles and DOM snapshots. The checks are
proposed by :func:`trajcheck.analyzers.draft.propose`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import hashlib

from ..analyzers import skeleton as sk
from ..analyzers.draft import ContractDraft, DraftScreen, propose
from ..analyzers.screencheck import TITLE_BAND
from ..base.box import Box
from ..media import ocr
from ..media.frames import FrameError, decode, read_frame_file
from ..media.screenread import ScreenPlan
from ..scoring.loading import final_answer
from ..base.errors import UsageError
from ..base.inputs import read_regular
from ..base.runfiles import safe_join, scoring_root
from ..media.dom import MAX_DOM_BYTES
from ..media.domscan import dom_shape
from ..readers.discovery import discover, get_reader
from ..schemas.records import Run
from ..store import ledger
from .views import one_run

#: The most lines of a DOM snapshot's text read (a page of tens of thousands of lines is not a screen).
MAX_LINES = 2000


def _dom_screen(run_dir: Path, rel: str | None, url: str | None, title: str | None) -> DraftScreen | None:
    """A screen from a DOM snapshot: its text a line per text node, and its page text as contracts read it;
    None when it cannot be read or parsed within the limits scoring keeps."""
    path = safe_join(run_dir, rel) if rel else None
    if path is None or not path.is_file() or path.stat().st_size > MAX_DOM_BYTES:
        return None
    try:
        html = read_regular(path, limit=MAX_DOM_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    shape = dom_shape(html)
    if shape.too_deep or shape.too_many:
        return None
    tree = sk.parse(html)
    page = sk.page_text(tree)  # drops scripts and styles from the tree: their text is not on the page
    body = tree.body
    lines = (body.text(deep=True, separator="\n") or "").splitlines()[:MAX_LINES] if body is not None else []
    return DraftScreen(url, page.title or title, tuple(x for x in (" ".join(s.split()) for s in lines) if x), page.text,
                  "dom")


def _ocr_screen(run: Run, run_dir: Path, rel: str | None, url: str | None, title: str | None) -> DraftScreen | None:
    """A screen from a frame read whole with OCR (cached on disk by its bytes, as scoring reads it): each line
    with its confidence and box, and the frame's title band where the run records no URL (a desktop or phone
    run); None without OCR or a readable frame."""
    path = safe_join(run_dir, rel) if rel else None
    eng, _why = ocr.engine() if path is not None else (None, None)
    if path is None or eng is None:
        return None
    try:
        raw = read_frame_file(path)
        frame = decode(path, raw)
    except (FrameError, OSError):
        return None
    scale = ScreenPlan.scale(run, frame)
    lines = tuple(ocr.cached_lines(eng, hashlib.blake2b(raw, digest_size=16).digest(), frame.luma,
                                   Box(0, 0, frame.width, frame.height), max(scale, ocr.TEXT_SCALE)))
    # the title band is a desktop's (menu bar, window titles): a run that records URLs shows a page there
    band = min(frame.height, round(TITLE_BAND * scale)) if url is None else 0
    return DraftScreen(url, title, tuple(x.text for x in lines), "\n".join(x.text for x in lines), "screen_text", lines,
                  band)


def _screens(run: Run, run_dir: Path, final_ocr: list[str] | None,
             read: bool = True) -> tuple[DraftScreen, DraftScreen]:
    """The run's first screen (before its first step) and its final one (after its last). Without a DOM
    snapshot, the first and final frames are read whole with OCR (``read``), else the final one is what the
    ledger says OCR read on it (``runs.screen_text_final``: its changed regions, without confidences)."""
    pages = [s.page for s in run.steps if s.page is not None]
    if not pages:
        first = DraftScreen()
        last_url = last_title = None
    else:
        p0, pn = pages[0], pages[-1]
        first = _dom_screen(run_dir, p0.dom_before, p0.url_before, p0.title_before) or \
            DraftScreen(p0.url_before, p0.title_before)
        last_url, last_title = pn.url_after or pn.url_before, pn.title_after or pn.title_before
        final = _dom_screen(run_dir, pn.dom_after or pn.dom_before, last_url, last_title)
        if final is not None:
            return first, final
    if read and run.steps:
        s0, sn = run.steps[0], run.steps[-1]
        got = _ocr_screen(run, run_dir, sn.frame_post or sn.frame_pre, last_url, last_title)
        if got is not None:
            if first.source == "none":
                first = _ocr_screen(run, run_dir, s0.frame_pre or s0.frame_post, first.url, first.title) or first
            return first, got
    if final_ocr:
        return first, DraftScreen(last_url, last_title, tuple(final_ocr), "\n".join(final_ocr), "screen_text")
    return first, DraftScreen(last_url, last_title)


def _row(ledger_dir: str | os.PathLike[str], run_id: str) -> dict[str, Any]:
    cols = ("run_id", "task_id", "status", "run_path", "eval_final_verdict", "screen_text_final")
    con = ledger.connect(ledger_dir)
    try:
        got = one_run(con, run_id, cols)
    finally:
        con.close()
    return dict(zip(cols, got))


def draft_contract(ledger_dir: str | os.PathLike[str], run_id: str) -> ContractDraft:
    """A contract for ``run_id``'s task, from what its final screen shows that its first did not. UsageError when
    the run is not in the ledger, was not scored, cannot be read again, or shows nothing new."""
    row = _row(ledger_dir, run_id)
    if row["status"] != "ok":
        raise UsageError(f"run {run_id!r} was not scored (invalid): fix it and score it first")
    refs, _ = discover([row["run_path"]])
    want = os.path.abspath(row["run_path"])
    ref = next((r for r in refs if r.key == want), refs[0] if len(refs) == 1 else None)
    if ref is None:
        raise UsageError(f"run {run_id!r}: its files are no longer at {row['run_path']}; score it again from where "
                         "it is now")
    with scoring_root(ref.root):
        run, _ = get_reader(ref.reader).read(ref.path, ref.display)
    first, final = _screens(run, ref.run_dir, row["screen_text_final"])
    draft = propose(run_id, row["task_id"], first, final, run.goal, final_answer(run))
    if row["eval_final_verdict"] not in ("pass", None):
        draft.notes.insert(0, f"the ledger's verdict of this run is {row['eval_final_verdict']}: draft a contract "
                              "only from a run you know succeeded")
    if not draft.contract["checks"]:
        raise UsageError(f"run {run_id!r}: " + "; ".join(draft.notes))
    return draft
