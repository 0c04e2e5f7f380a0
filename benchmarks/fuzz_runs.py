"""Seeded mutation fuzzing of `trajcheck score`: valid sample runs, mutated, scored in batches.

    python benchmarks/fuzz_runs.py [--cases N] [--batch B] [--seed S] [--jobs J] [--keep DIR]

Each case is a copy of a recorded run from sample_runs/, or of a run of every other reader (the Playwright
trace, the transcript, session-log and history fixtures, the real logs under tests/fixtures/real, and the real
runs of ../shared/realruns where it is there), with one to three mutations: keys removed, values swapped for odd types, huge and integral floats (``1e+308``
as a step index), integers beyond 32 and 64 bits, ``1e999``, NaN and Infinity written raw, lone UTF-16
surrogates, long and non-ASCII strings, deep nesting, truncated, dropped, duplicated and swapped
lines, bytes that are not UTF-8, paths out of the run, flipped and truncated frame and archive bytes,
deeply nested and truncated DOM snapshots. Batches of B cases are scored into one fresh ledger with
:func:`trajcheck.score`, and every batch must satisfy:

  * no exception escapes ``trajcheck.score`` (a bad run never costs the batch);
  * every run directory of the batch has exactly one row in the committed ledger, or (a run of another
    harness that a mutation made unreadable as any format) is named as a folder no reader claims;
  * every ``invalid`` row names its problem (an error ending in ``[slug]``).

The suite runs a few batches (tests/test_fuzz.py); this script runs thousands of cases (default 2000,
about 10 minutes on 2 cores) and prints the problem slugs seen and every failure, with the seed that
reproduces it (``--seed S --cases B`` replays one batch).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import shutil
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"
TRACE = ROOT / "tests" / "fixtures" / "playwright_trace" / "notes-trace"
FIXTURES = ROOT / "tests" / "fixtures"
#: One run of every other reader: its own fixtures, the real logs committed beside them, and (where ../shared is
#: there) the real WebVoyager, BrowserGym and browser-use runs.
ADAPTER_RUNS = [FIXTURES / p for p in ("anthropic/feedback-2x", "anthropic/claude-steps", "openai/cua-newsletter",
                                       "ui_tars/workspace", "ui_tars/macos-session", "ui_tars/desktop-report",
                                       "real/ui_tars/agent-tars-gui-basic", "real/anthropic/cs715-session-3",
                                       "real/openai/response-1", "real/playwright/pwtracellm-v8-scroll",
                                       "real/osworld/o3-writer-table/66399b0d-8fda-4618-95c4-bfc6191617e9",
                                       "browser_use_new/recipe-search")]
SHARED = ROOT.parent / "shared" / "realruns"
#: Files that make a folder run data: one left that no reader reads must be named (no_reader_claims).
DATA_SUFFIXES = (".json", ".jsonl", ".html", ".htm", ".png", ".jpg", ".jpeg", ".webp")

#: Raw JSON tokens json.dumps cannot write, put in place of a placeholder string.
RAW_TOKENS = ["1e999", "-1e999", "NaN", "Infinity", "-Infinity", "1e+308", "-1e+308", "1" + "0" * 40,
              "9" * 5000, "2147483648", "9223372036854775808", "-9223372036854775809", "1.5e300", "4.9e-324"]
ODD_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, 1e308, 1e+308, 2 ** 31, 2 ** 31 - 1, 2 ** 63, 2 ** 64,
                         -(2 ** 63) - 1, 10 ** 30, "", "x" * 5000, "CLICK", "日本語テキスト", "emoji 🎉",
                         "\u202e\u0000bad", [], [1, "a", None], {}, {"a": {"b": [1, 2]}}, "../../etc/passwd",
                         "/etc/passwd", "frames/missing.png"]
PLACEHOLDER = "__fuzz_raw__"
SLUG = re.compile(r"\[([a-z0-9_]+)\]$")


def _leaves(o: Any) -> list[tuple[Any, ...]]:
    """Every path in ``o`` down to 12 levels."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(o, ())]
    while stack:
        v, path = stack.pop()
        out.append(path)
        if len(path) < 12:
            items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
            stack.extend((x, path + (k,)) for k, x in items)
    return out


def _nest(rng: random.Random) -> str:
    """Raw JSON nested 10 to 100,000 levels (json.dumps cannot write the deep ones)."""
    d = rng.choice([10, 63, 65, 200, 3000, 100_000])
    return "[" * d + '{"k": "deep"}' + "]" * d


def mutate_record(rec: Any, rng: random.Random) -> str:
    """One JSON record (run.json or a step), mutated, as JSON text (possibly with raw odd tokens)."""
    rec = copy.deepcopy(rec)
    raw: list[str] = []
    for _ in range(rng.randint(1, 3)):
        paths = _leaves(rec)[1:]
        if not paths:
            break
        p = rng.choice(paths)
        parent = rec
        for k in p[:-1]:
            parent = parent[k]
        op = rng.random()
        if op < 0.35:
            parent[p[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
        elif op < 0.55:
            parent[p[-1]] = PLACEHOLDER
            raw.append(rng.choice(RAW_TOKENS))
        elif op < 0.65 and isinstance(parent, dict):
            parent.pop(p[-1])
        elif op < 0.75:
            parent[p[-1]] = PLACEHOLDER
            raw.append(_nest(rng))
        elif op < 0.85 and isinstance(parent, dict):
            parent[rng.choice(["zz", "extra_\ud800", "x" * 300, "ключ"])] = rng.choice(ODD_VALUES)
        else:
            parent[p[-1]] = "\ud800 lone" if rng.random() < 0.5 else "\udc80"
    if isinstance(rec, dict) and rng.random() < 0.15:
        rec["index" if "action" in rec else "trial"] = PLACEHOLDER
        raw.append(rng.choice(["1e+308", "2147483648", "9223372036854775808", "1e999", "-1"]))
    text = json.dumps(rec, ensure_ascii=rng.random() < 0.5)
    rng.shuffle(raw)  # json.dumps orders the placeholders by key, not by when they were put
    for token in raw:
        text = text.replace(json.dumps(PLACEHOLDER), token, 1)
    return text


def _mutate_steps(run: Path, rng: random.Random) -> None:
    f = run / "steps.jsonl"
    lines = [l for l in f.read_text("utf-8").splitlines() if l.strip()]
    op = rng.random()
    i = rng.randrange(len(lines))
    if op < 0.55:
        lines[i] = mutate_record(json.loads(lines[i]), rng)
    elif op < 0.65:
        lines[i] = lines[i][: rng.randrange(len(lines[i]))]
    elif op < 0.72:
        del lines[i]
    elif op < 0.78:
        lines.insert(i, lines[i])
    elif op < 0.84 and len(lines) > 1:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op < 0.9:
        f.write_bytes(("\n".join(lines) + "\n").encode() + b'{"index": 99, "action": {"type": "WAIT"}, "x": "\xff\xfe"}\n')
        return
    else:
        lines = []
    f.write_text("\n".join(lines) + ("\n" if lines else ""), "utf-8", errors="surrogatepass")


def _mutate_bytes(path: Path, rng: random.Random) -> None:
    data = bytearray(path.read_bytes())
    op = rng.random()
    if not data or op < 0.3:
        path.write_bytes(bytes(data[: rng.randrange(len(data) + 1)]))
    elif op < 0.8:
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
    else:
        path.write_bytes(b"")


def _mutate_dom(path: Path, rng: random.Random) -> None:
    op = rng.random()
    if op < 0.4:
        path.write_text("<html><body>" + "<div>" * rng.choice([100, 600, 5000]) + "x</body></html>")
    elif op < 0.6:
        path.write_text("<svg>" + "<div/>" * 700 + "</svg>")
    else:
        _mutate_bytes(path, rng)


def mutate_native(run: Path, rng: random.Random) -> None:
    """Apply 1-3 mutations to a copy of a native run (a mutation that finds nothing to mutate, because an
    earlier one broke or removed its file, is skipped)."""
    for _ in range(rng.randint(1, 3)):
        try:
            _mutate_native_once(run, rng)
        except (OSError, ValueError, IndexError, KeyError, TypeError, RecursionError):
            pass


def _mutate_native_once(run: Path, rng: random.Random) -> None:
    op = rng.random()
    if op < 0.15:
        meta = json.loads((run / "run.json").read_text("utf-8"))
        (run / "run.json").write_text(mutate_record(meta, rng), "utf-8", errors="surrogatepass")
    elif op < 0.45:
        _mutate_steps(run, rng)
    elif op < 0.65:
        frames = sorted((run / "frames").glob("*")) if (run / "frames").is_dir() else []
        if frames:
            _mutate_bytes(rng.choice(frames), rng)
    elif op < 0.75:
        doms = sorted((run / "dom").glob("*")) if (run / "dom").is_dir() else []
        if doms:
            _mutate_dom(rng.choice(doms), rng)
    elif op < 0.9:  # what a run may well hold: unknown keys with odd values, long and non-ASCII text
        f = run / "steps.jsonl"
        lines = [json.loads(l) for l in f.read_text("utf-8").splitlines() if l.strip()]
        s = rng.choice(lines)
        key = rng.choice(["reasoning", "note", "x_extra"])
        s[key] = rng.choice(["日本語 " * 2000, "emoji 🎉" * 100, {"nested": list(range(1000))}, [None, 2 ** 70],
                             "\u202e right-to-left", "<script>alert(1)</script>"])
        f.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    elif op < 0.95 and (run / "contract.json").exists():
        _mutate_bytes(run / "contract.json", rng)
    else:
        (run / rng.choice(["run.json", "steps.jsonl"])).unlink(missing_ok=True)


def mutate_trace(run: Path, rng: random.Random) -> None:
    """Mutate a copy of the Playwright trace fixture: event lines, or the archive's bytes."""
    z = run / "trace.zip"
    if rng.random() < 0.3:
        _mutate_bytes(z, rng)
        return
    with zipfile.ZipFile(z) as src:
        members = [(i.filename, src.read(i)) for i in src.infolist()]
    out = []
    for name, data in members:
        if name.endswith(".trace") and rng.random() < 0.8:
            lines = data.decode("utf-8").splitlines()
            i = rng.randrange(len(lines))
            try:
                lines[i] = mutate_record(json.loads(lines[i]), rng)
            except (ValueError, RecursionError):
                pass
            data = "\n".join(lines).encode("utf-8", "surrogatepass")
        elif name.endswith((".jpeg", ".png")) and rng.random() < 0.05:
            data = bytes(b ^ 0xFF for b in data[:64]) + data[64:]
        out.append((name, data))
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, data in out:
            dst.writestr(name, data)


def _mutate_json_doc(path: Path, rng: random.Random) -> None:
    """One JSON (or JSONL) log of another harness: a record somewhere inside it mutated as run records are."""
    text = path.read_text("utf-8", errors="replace")
    if path.suffix == ".jsonl" and not text.lstrip().startswith("["):
        lines = [l for l in text.splitlines() if l.strip()]
        if lines:
            i = rng.randrange(len(lines))
            lines[i] = mutate_record(json.loads(lines[i]), rng)
            path.write_text("\n".join(lines) + "\n", "utf-8", errors="surrogatepass")
        return
    doc = json.loads(text)
    dicts = [p for p in _leaves(doc) if _at(doc, p).__class__ is dict]
    where = rng.choice(dicts)
    if not where:
        path.write_text(mutate_record(doc, rng), "utf-8", errors="surrogatepass")
        return
    parent = _at(doc, where[:-1])
    mutated = mutate_record(parent[where[-1]], rng)
    parent[where[-1]] = PLACEHOLDER + "doc"
    path.write_text(json.dumps(doc).replace(json.dumps(PLACEHOLDER + "doc"), mutated, 1), "utf-8",
                    errors="surrogatepass")


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def mutate_adapter_run(run: Path, rng: random.Random) -> None:
    """Apply 1-3 mutations to a copy of another harness's run: a record inside a log, a log cut short or given
    bytes that are not UTF-8, a screenshot's or an archive's bytes, a file removed."""
    for _ in range(rng.randint(1, 3)):
        files = sorted(p for p in run.rglob("*") if p.is_file() and not p.name.endswith(".md"))
        if not files:
            return
        logs = [p for p in files if p.suffix in (".json", ".jsonl", ".html", ".txt")]
        other = [p for p in files if p not in logs]
        op = rng.random()
        try:
            if op < 0.5 and logs:
                f = rng.choice([p for p in logs if p.suffix != ".html"] or logs)
                if f.suffix == ".html":
                    _mutate_bytes(f, rng)
                else:
                    _mutate_json_doc(f, rng)
            elif op < 0.65 and logs:
                f = rng.choice(logs)
                data = f.read_bytes()
                f.write_bytes(data[: rng.randrange(len(data) + 1)])
            elif op < 0.72 and logs:
                f = rng.choice(logs)
                data = f.read_bytes()
                i = rng.randrange(len(data) + 1)
                f.write_bytes(data[:i] + b"\xff\xfe\xc3" + data[i:])
            elif op < 0.9 and other:
                _mutate_bytes(rng.choice(other), rng)
            else:
                rng.choice(files).unlink()
        except (OSError, ValueError, IndexError, KeyError, TypeError, RecursionError):
            pass


def adapter_sources() -> list[Path]:
    """The runs of the other readers the fuzzer copies (those that are there)."""
    shared = [next(iter(sorted(d for d in (SHARED / name).iterdir() if d.is_dir() and not d.name.startswith("_"))),
                   None) for name in ("webvoyager", "browsergym-fork", "browser-use") if (SHARED / name).is_dir()]
    osworld = sorted(p.parent for p in (FIXTURES / "osworld").rglob("traj.jsonl"))[:1]
    return [p for p in ADAPTER_RUNS + osworld + shared if p is not None and p.is_dir()]


def small_samples(n: int) -> list[Path]:
    """The n sample runs with the fewest frame bytes (fast to score)."""
    runs = sorted(p.parent for p in SAMPLES.glob("*/run.json"))
    return sorted(runs, key=lambda r: sum(f.stat().st_size for f in r.rglob("*") if f.is_file()))[:n]


def make_batch(dest: Path, seed: int, cases: int, sources: list[Path]) -> list[Path]:
    """``cases`` mutated runs under ``dest`` (run_id = directory name before mutation)."""
    rng = random.Random(seed)
    out = []
    for i in range(cases):
        src = rng.choice(sources)
        run = dest / f"case-{seed}-{i:04d}"
        shutil.copytree(src, run)
        if (run / "run.json").is_file():
            meta = json.loads((run / "run.json").read_text("utf-8"))
            meta["run_id"] = run.name
            (run / "run.json").write_text(json.dumps(meta), "utf-8")
            mutate_native(run, rng)
        elif (run / "trace.zip").is_file():
            mutate_trace(run, rng)
        else:
            mutate_adapter_run(run, rng)
        out.append(run)
    return out


def check_batch(runs_root: Path, runs: list[Path], ledger: Path, jobs: int) -> tuple[list[str], Counter[str]]:
    """Score the batch; the failures (empty when every property holds) and the problem slugs seen."""
    import trajcheck
    from trajcheck.store import ledger as L

    failures: list[str] = []
    slugs: Counter[str] = Counter()
    try:
        result = trajcheck.score([runs_root], out=ledger, jobs=jobs)
    except Exception as exc:  # noqa: BLE001  (the property under test)
        return [f"exception escaped: {type(exc).__name__}: {exc}"], slugs
    rows = L.query(ledger, "select run_path, status, error, warnings from runs").rows
    paths = Counter(r[0] for r in rows)
    named = {Path(p.file) for p in result.problems if p.slug == "no_reader_claims"}
    for run in runs:
        if paths[str(run)] > 1:
            failures.append(f"{run.name}: {paths[str(run)]} rows")
        elif any((run / n).exists() for n in ("run.json", "trace.zip")):
            if paths[str(run)] != 1:
                failures.append(f"{run.name}: {paths[str(run)]} rows")
        elif not paths[str(run)] and not any(n == run or run in n.parents for n in named) and any(
                f.suffix.lower() in DATA_SUFFIXES for f in run.rglob("*")):
            # a folder of another harness that no reader claims any more is named, never passed over
            failures.append(f"{run.name}: neither scored nor named as a folder no reader claims")
    for path, status, error, warnings in rows:
        if status == "invalid":
            found = SLUG.findall(error or "")
            if not found:
                failures.append(f"{Path(path).name}: invalid without a named problem: {error!r}")
            slugs.update(found)
            if "internal_error" in found:  # named, so the property holds, but trajcheck crashed: a bug to report
                slugs.update([f"internal_error in {Path(path).name}: {error[:300]}"])
        elif status != "ok":
            failures.append(f"{Path(path).name}: status {status!r}")
        slugs.update(["(runs ok)" if status == "ok" else "(runs invalid)"])
        for w in warnings or []:
            slugs.update("w:" + s for s in SLUG.findall(w))
    for path in paths:
        if Path(path).parent != runs_root:
            failures.append(f"a row for {path}, which is no run of the batch")
    if len(result.invalid) != sum(1 for r in rows if r[1] == "invalid"):
        failures.append(f"the result lists {len(result.invalid)} invalid runs, the ledger "
                        f"{sum(1 for r in rows if r[1] == 'invalid')}")
    return failures, slugs


def run_fuzz(cases: int, batch: int, seed: int, jobs: int, keep: Path | None = None,
             log: Callable[[str], None] = print) -> tuple[list[str], Counter[str]]:
    sources = small_samples(6) + ([TRACE] if TRACE.is_dir() else []) + adapter_sources()
    failures: list[str] = []
    slugs: Counter[str] = Counter()
    done = 0
    with tempfile.TemporaryDirectory(prefix="trajcheck-fuzz-") as tmp:
        base = keep or Path(tmp)
        k = 0
        while done < cases:
            n = min(batch, cases - done)
            s = seed + k
            root = base / f"batch-{s}"
            runs = make_batch(root, s, n, sources)
            fails, seen = check_batch(root, runs, base / f"ledger-{s}", jobs)
            failures += [f"seed {s}: {f}" for f in fails]
            slugs += seen
            done += n
            k += 1
            log(f"{done}/{cases} cases, {len(failures)} failures")
            if keep is None:
                shutil.rmtree(root, ignore_errors=True)
                shutil.rmtree(base / f"ledger-{s}", ignore_errors=True)
    return failures, slugs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--keep", type=Path, default=None, help="keep the mutated runs and ledgers here")
    a = ap.parse_args()
    start = time.perf_counter()
    failures, slugs = run_fuzz(a.cases, a.batch, a.seed, a.jobs, a.keep,
                               log=lambda m: print(m, file=sys.stderr, flush=True))
    print(f"{a.cases} cases in {time.perf_counter() - start:.0f}s, {len(failures)} failures")
    for slug, n in slugs.most_common():
        print(f"  {n:6d}  {slug}")
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
