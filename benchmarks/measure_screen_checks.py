"""How often a contract's text check finds on the screen a text the page shows (issue 39, part 3).

    python benchmarks/measure_screen_checks.py [--regex]

Each sample run is copied with its DOM snapshots removed (frames, URLs and everything else kept), without its
recorded evaluator, and with a contract of ``text_present`` checks: one for each text of 4 characters or more
that its final DOM snapshot shows as an element's own text inside the frame (its ``data-bbox``). Every such
text is on the screen, so each check should pass: one that fails would fail a true success. Then as many
checks of texts that other runs' final screens show and this one's DOM does not hold: each should fail, and
one that passes would pass a run on a text it does not show. Scored with ``--ocr auto``; printed: how the
checks of each kind came out, and each one that did not come out right. With ``--regex`` the checks are
``text_matches`` of each text's words as a pattern (``\\W+`` between them), as a user writes a pattern for a
message.
"""

from __future__ import annotations

import collections
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import trajcheck  # noqa: E402
from trajcheck.analyzers.skeleton import parse  # noqa: E402


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def shown_texts(run: Path, step: dict) -> list[str]:
    """The own texts of 4+ characters the step's post-action DOM shows inside its post frame."""
    meta = json.loads((run / "run.json").read_text())
    scale = float((meta.get("recorder") or {}).get("device_scale_factor") or 1)
    dom, frame = (step.get("page") or {}).get("dom_after"), (step.get("frames") or {}).get("post")
    if not dom or not frame:
        return []
    width, height = Image.open(run / frame).size
    out: list[str] = []
    for node in parse((run / dom).read_text()).css("[data-bbox]"):
        box = (node.attributes.get("data-bbox") or "").split()
        if len(box) != 4 or node.tag in ("script", "style", "title"):
            continue
        x, y, w, h = (float(v) * scale for v in box)
        text = " ".join((node.text(deep=False) or "").split())
        if w > 0 and h > 0 and x >= 0 and y >= 0 and x + w <= width and y + h <= height \
                and len(_norm(text)) >= 4 and text not in out:
            out.append(text)
    return out


def check(text: str, regex: bool) -> dict[str, str]:
    """A check that ``text`` is on the screen: ``text_present``, or ``text_matches`` of the text as a pattern
    (its letters and digits as written, anything between words allowed)."""
    if not regex:
        return {"type": "text_present", "text": text}
    return {"type": "text_matches", "pattern": r"\W+".join(re.escape(w) for w in re.findall(r"\w+", text))}


def build(dst: Path, regex: bool = False) -> dict[str, int]:
    """The runs, by name, with how many of their checks (the first ones) are of texts on their screen."""
    present: dict[str, int] = {}
    runs = sorted(p.parent for p in (ROOT / "sample_runs").glob("*/run.json"))
    shown = {}
    for src in runs:
        steps = [json.loads(x) for x in (src / "steps.jsonl").read_text().splitlines()]
        shown[src.name] = (shown_texts(src, steps[-1]) if steps else [], steps)
    for k, src in enumerate(runs):
        run = dst / src.name
        shutil.copytree(src, run)
        texts, steps = shown[src.name]
        dom = (steps[-1].get("page") or {}).get("dom_after") if steps else None
        page = _norm(parse((src / dom).read_text()).body.text(separator=" ")) if dom else ""
        others = [t for o in runs[k + 1:] + runs[:k] for t in shown[o.name][0] if _norm(t) not in page]
        absent = list(dict.fromkeys(others))[:len(texts)]
        present[src.name] = len(texts)
        (run / "contract.json").write_text(json.dumps({"format": "trajcheck.contract/1", "checks": [
            check(t, regex) for t in texts] + [check(t, regex) for t in absent]}))
        meta = json.loads((run / "run.json").read_text())
        (meta.get("outcome") or {}).pop("score", None)
        (run / "run.json").write_text(json.dumps(meta))
        shutil.rmtree(run / "dom", ignore_errors=True)
        for s in steps:
            for key in ("dom_before", "dom_after"):
                (s.get("page") or {}).pop(key, None)
        (run / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    return present


def main() -> int:
    regex = "--regex" in sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="trajcheck-checks-") as t:
        tmp = Path(t)
        present = build(tmp / "runs", regex)
        trajcheck.score([tmp / "runs"], tmp / "ledger", ocr="auto", force=True)
        counts: collections.Counter[tuple[str, str]] = collections.Counter()
        for r in trajcheck.query(tmp / "ledger", "select run_id, contract_checks from runs order by run_id").to_json():
            for k, chk in enumerate(json.loads(r["contract_checks"] or "[]")):
                on = k < present[r["run_id"]]
                kind = "on the screen" if on else "absent from the screen"
                state = {True: "passed", False: "failed", None: "undecided"}[chk["passed"]]
                counts[(kind, state)] += 1
                if state != ("passed" if on else "failed"):
                    why = chk["evidence"].get("undecided") or "not found on the screen"
                    what = chk["evidence"].get("text") or chk["evidence"].get("pattern")
                    print(f"  {kind}, {state}: {r['run_id']}: {what!r} ({why})")
        print(f"{'text_matches' if regex else 'text_present'} checks, DOM removed: {sum(counts.values())}")
        for kind in ("on the screen", "absent from the screen"):
            print(f"  texts {kind}: {sum(v for (k, _s), v in counts.items() if k == kind)}; passed "
                  f"{counts[(kind, 'passed')]}, failed {counts[(kind, 'failed')]}, undecided "
                  f"{counts[(kind, 'undecided')]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
