"""The README's figures about the sample runs, generated from a ledger of them and sample_runs/labels.json.

    python -m devtools.samplefigures          # scores sample_runs/ into a temporary ledger, prints the README text
    python -m devtools.samplefigures LEDGER   # the text from a ledger of the sample runs
    python -m devtools.samplefigures --time   # times `trajcheck score` on this machine, writes TIMINGS, prints
                                              # the README's timing paragraph

The closing lines `score` prints for the sample runs (:func:`closing`) are quoted in the README too. Timings
cannot be checked by a test: ``--time`` measures them (fresh processes of the installed `trajcheck`, the best
of a few, start-up included), keeps the measurement with the machine's cores, load and the commit in
:data:`TIMINGS`, and the test checks that the README's paragraph is the one written from it.

Each paragraph printed is in the README as is; tests/test_readme.py fails when one is stale (a sample run was
added, re-recorded or scored differently), as it does for the exit-code table (devtools/exitdoc.py). The words
around the figures are written here, the figures come from `agree`, `compare` and the ledger's runs.
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"
#: The last timing of `trajcheck score` on the sample runs (``--time``), which the README's paragraph quotes.
TIMINGS = ROOT / "benchmarks" / "readme_timings.json"
#: The sample run timed alone: 5 frames.
ONE_RUN = "consent-overlay-on"
LABELS = SAMPLES / "labels.json"
ARMS = "config.perceptual_verifier"
#: The README's line width (its paragraphs are wrapped at it).
WIDTH = 80


def _kn(rate: dict[str, Any]) -> str:
    return f"{rate['k']}/{rate['n']}"


def _wilson(rate: dict[str, Any]) -> str:
    return f"[{100 * rate['low']:.1f}, {100 * rate['high']:.1f}]%"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def figures(ledger: Path) -> dict[str, Any]:
    """The figures the README quotes, from ``ledger`` (the sample runs scored) and sample_runs/labels.json."""
    import json

    from trajcheck import commands

    agree = commands.agree(ledger, LABELS)
    src = {s["source"]: s for s in agree["sources"]}
    cmp = commands.compare([ledger], ARMS).to_json()
    arms = {a["arm"]: a for a in cmp["arms"]}
    [pair] = cmp["paired"]
    labels = json.loads(LABELS.read_text("utf-8"))
    # the runs as most runs in the wild: no contract, no judge, no evaluator score
    bare = commands.query(ledger, "select run_id, evidence_verdict, false_claim, false_claim_basis from runs "
                                  "where contract_name is null and judge_model is null and outcome_score is null "
                                  "and status = 'ok'").rows
    decided = [r for r in bare if r[1] in ("pass", "fail")]
    return {
        "runs": commands.query(ledger, "select count(*) from runs").rows[0][0],
        "bare": len(bare), "bare_decided": len(decided),
        "bare_agree": sum(1 for r in decided if labels.get(r[0], {}).get("outcome") == r[1]),
        "bare_caught": sum(1 for r in bare if r[2] and r[3] == "evidence"),
        "step": src["perceptual_verifier"], "seed": src["perceptual_verifier_seed"],
        "final": src["final_verdict"], "evidence": src["evidence"], "self": src["self_reported"],
        "labelled": agree["matched_runs"], "pair": pair, "off": arms["false"], "on": arms["true"],
        "no_key": cmp["runs_without_value"],
    }


def paragraphs(f: dict[str, Any]) -> list[str]:
    """The README's paragraphs that quote figures, each wrapped as the README wraps it."""
    step, seed, final, ev, own = f["step"], f["seed"], f["final"], f["evidence"], f["self"]
    pair, off, on = f["pair"], f["off"], f["on"]
    ow, nw = off["warnings"], on["warnings"]
    never = " where the warnings were never shown" if ow["shown"]["shown"] == 0 else ""
    texts = [
        f"`sample_runs/` holds {f['runs']} runs recorded by `sample_runs/recorder/record.py`: a scripted agent "
        "driving Debian's Chromium with Playwright over local pages that load Bootstrap 5.3 and "
        "vanilla-cookieconsent 3.1 from npm (the recorder's README lists every run and how to re-record them; "
        "the recorder also plays the server of a sign-up form that validates on the server, Rails style). "
        f"{pair['pairs']} tasks are recorded in both ablation arms: with `{ARMS}` on, the runner calls "
        "trajcheck's verifier live and the agent recovers when it warns; with it off, the agent declares "
        f"success. {f['bare']} runs (the `nc-*` runs and `menu-toggle-aimless`) have no contract, no judge and "
        "no evaluator score, like most runs in the wild, and take no part in the ablation: a false claim after "
        "a swallowed submit, after a server-side validation error, at the end of a loop and after a tour of "
        "menus that went nowhere; a success by navigation, by an in-page message, and after two swallowed "
        "clicks the agent recovered from; a read whose evidence is honestly inconclusive; and an agent that "
        "gives up at a sign-in wall and says so. The ground truth the recorder knows is in "
        "`sample_runs/labels.json`.",
        f"* **`agree`**, per high-risk step ({step['covered']} labelled): trajcheck's verdict F1 "
        f"{step['f1']:.3f} ({_kn(step['recall'])} effects, {_kn(step['tnr'])} no-effect), the seed rule F1 "
        f"{seed['f1']:.3f} (precision {_kn(seed['precision'])}, recall {_kn(seed['recall'])}), both at the "
        "default threshold 2 (what is in-sample: [docs/perceptual.md](docs/perceptual.md#choosing-the-threshold))."
        f" Per run, the final verdict covers {final['covered']} of {f['labelled']} runs and agrees with "
        f"{final['tp'] + final['tn']} of those {final['covered']} labels; the evidence referee alone covers "
        f"{ev['covered']} and is right on {ev['tp'] + ev['tn']} (precision {_kn(ev['precision'])}: it passes the "
        f"near-miss sequencer run on its \"saved\" message; recall {_kn(ev['recall'])}); the agents' own claim "
        f"of success has precision {_kn(own['precision'])}.",
        f"* On the {f['bare']} runs without contracts, the evidence referee decides {f['bare_decided']} and "
        f"agrees with {f['bare_agree']} of their labels; the {f['bare_caught']} false claims are caught "
        "(`false_claim_basis = evidence`), the give-up is `claimed_success = false` (`message_admits_failure`) "
        "and the inconclusive read stays `unknown`.",
        f"* **`compare`**: over the {pair['pairs']} paired tasks, the verifier-on run succeeded where the "
        f"verifier-off run failed in {pair['arm_only']} and the reverse in {pair['baseline_only']} "
        f"({100 * pair['difference']:+.0f} pp, Newcombe 95% interval [{100 * pair['low']:+.1f}, "
        f"{100 * pair['high']:+.1f}] pp; exact McNemar p = {pair['mcnemar_p']:.4g}: {pair['pairs']} pairs "
        f"cannot say more); {off['false_claim']['k']} of the {off['runs']} off-arm runs are false claims; the "
        f"{f['no_key']} runs without the key are counted apart. After a warning the agent recovered "
        f"{nw['recovered']['k']} times of {nw['recovered']['n']} with the verifier on (Wilson "
        f"{_wilson(nw['recovered'])}) and {ow['recovered']['k']} of {ow['recovered']['n']} with it off{never}: "
        f"{_times(ow['followups']['repeated'])} it clicked the same dead button again, "
        f"{_times(ow['followups']['declared_done'])} it declared success. False warnings: "
        f"{ow['false']['k']} with the verifier off and {nw['false']['k']} with it on (the Delete click did "
        "mount its dialog, out of view: [docs/perceptual.md](docs/perceptual.md#after-a-warning)).",
    ]
    out = []
    for t in texts:
        bullet = t.startswith("* ")
        out.append(textwrap.fill(t, WIDTH, subsequent_indent="  " if bullet else "", break_long_words=False,
                                 break_on_hyphens=False))
    return out


def closing(ledger: Path) -> list[str]:
    """The two closing lines ``trajcheck score`` prints for the runs of ``ledger`` (the verdicts and false
    claims, then the verdicts' sources), made by the functions that print them."""
    from trajcheck.base.verdicts import coverage
    from trajcheck.cli.score import _verdict_line
    from trajcheck import commands

    res = commands.query(ledger, "select * from runs order by run_id")
    rows = [dict(zip(res.columns, r)) for r in res.rows]
    return [_verdict_line(rows), coverage(rows).text()]


def _best(args: list[str], repeat: int, before: Any = None) -> float:
    """The fastest wall time of ``repeat`` fresh processes of ``args`` (``before()`` run ahead of each)."""
    import subprocess
    import time

    best = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        t = time.perf_counter()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t)
    return round(best, 2)


def measure(repeat: int = 3) -> dict[str, Any]:
    """Time `trajcheck score` (the script installed beside this Python) on one 5-frame sample run, on all the
    sample runs into a new ledger, and again on the unchanged runs; with the machine's cores and load."""
    import datetime
    import os
    import shutil
    import subprocess

    exe = str(Path(sys.executable).with_name("trajcheck"))
    with tempfile.TemporaryDirectory(prefix="trajcheck-timings-") as tmp:
        one, all_, again = Path(tmp) / "one", Path(tmp) / "all", Path(tmp) / "again"

        def fresh(p: Path) -> Any:
            return lambda: shutil.rmtree(p, ignore_errors=True)

        subprocess.run([exe, "score", str(SAMPLES / ONE_RUN), "--out", str(one), "-q"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # caches warm, as a user's second run
        one_s = _best([exe, "score", str(SAMPLES / ONE_RUN), "--out", str(one), "-q"], repeat + 2, fresh(one))
        all_s = _best([exe, "score", str(SAMPLES), "--out", str(all_), "-q"], repeat, fresh(all_))
        subprocess.run([exe, "score", str(SAMPLES), "--out", str(again), "-q"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        again_s = _best([exe, "score", str(SAMPLES), "--out", str(again), "-q"], repeat)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"
    return {"cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 1), "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "repeat": repeat,
            "one_run": ONE_RUN, "one_run_s": one_s, "runs": len(list(SAMPLES.glob("*/run.json"))),
            "sample_runs_s": all_s, "unchanged_s": again_s}


def timing_paragraph(t: dict[str, Any]) -> str:
    """The README's timing paragraph, from a measurement (:data:`TIMINGS`), wrapped as the README wraps it."""
    text = (f"Measured on a {t['cpus']}-core machine shared with other work (load {t['load']:g}; "
            f"`python -m devtools.samplefigures --time` at {t['commit']}, {t['date']}; the best of "
            f"{t['repeat']} or more fresh processes, start-up included): scoring one 5-frame run took "
            f"{t['one_run_s']:.2f} s from the command line, the {t['runs']} sample runs {t['sample_runs_s']:.2f} s, "
            f"and a second `score` of the unchanged runs {t['unchanged_s']:.2f} s. Read them as an order of "
            "magnitude: [docs/performance.md](docs/performance.md) has the benchmarks, their ratios and the "
            "200-run pass.")
    return textwrap.fill(text, WIDTH, break_long_words=False, break_on_hyphens=False)


def text(ledger: Path | None = None) -> str:
    """The paragraphs, a blank line apart, from ``ledger`` or (None) the sample runs scored afresh."""
    if ledger is not None:
        quoted = "score's closing lines, quoted in the README:\n" + "".join(f"`{line}`\n" for line in closing(ledger))
        return "\n\n".join(paragraphs(figures(ledger))) + "\n\n" + quoted
    from trajcheck.scoring.pipeline import score_paths
    from trajcheck.store import ledger as store

    with tempfile.TemporaryDirectory(prefix="trajcheck-samplefigures-") as tmp:
        out = Path(tmp) / "L"
        report = score_paths([SAMPLES], jobs=1)
        store.write(out, [r.run for r in report.results], [s for r in report.results for s in r.steps])
        return text(out)


if __name__ == "__main__":
    if sys.argv[1:] == ["--time"]:
        import json

        measured = measure()
        TIMINGS.write_text(json.dumps(measured, indent=1) + "\n", "utf-8")
        print(timing_paragraph(measured))
    else:
        print(text(Path(sys.argv[1]) if len(sys.argv) > 1 else None), end="")
