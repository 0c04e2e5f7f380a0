"""Issue 30, cost and time: the token, cost and time columns filled from what the logs record (vendor transcripts,
a session log's token_usage events, BrowserGym's profiling, the native format), a cost from `--prices` only
where the log gives tokens and the model, and the spend figures of compare and export only where the ledger
has them."""

from __future__ import annotations

import gzip
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from trajcheck.readers.kit import safe_pickle
from trajcheck.readers.kit.sparse import steps_of, trailing_usage
from trajcheck.readers.kit.usage import seconds_of
from trajcheck.analyzers.spend import Price, assess, price_of
from trajcheck.cli.main import app
from trajcheck.scoring.options import read_prices
from trajcheck.schemas.records import Action, Usage

from conftest import REALRUNS, ROOT, SAMPLES, copy_run, read_steps, run_json, write_steps

REAL = ROOT / "tests" / "fixtures" / "real"
FIX = ROOT / "tests" / "fixtures"


@pytest.fixture(autouse=True)
def adapters(monkeypatch):
    have = {r.name for r in discovery.READERS}
    monkeypatch.setattr(discovery, "READERS", discovery.READERS + [r for r in ALL if r.name not in have])


def _ledger(tmp_path: Path, *paths: Path, **options: Any) -> tuple[Any, dict[str, dict[str, Any]],
                                                                  dict[str, list[dict[str, Any]]]]:
    """Score ``paths`` into a fresh ledger: the result, the runs rows by run_id, the steps rows by run_id."""
    out = tmp_path / f"L{len(list(tmp_path.glob('L*')))}"
    res = trajcheck.score(list(paths), out=out, jobs=1, **options)
    runs = {r["run_id"]: r for r in trajcheck.runs(out).astype(object).where(trajcheck.runs(out).notna(), None)
            .to_dict("records")}
    steps_df = trajcheck.steps(out)
    steps: dict[str, list[dict[str, Any]]] = {}
    for r in steps_df.astype(object).where(steps_df.notna(), None).to_dict("records"):
        steps.setdefault(r["run_id"], []).append(r)
    for v in steps.values():
        v.sort(key=lambda r: r["step_index"])
    return res, runs, steps


# --- the vendor transcripts ----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("session", ["cs715-session-3", "cs715-session-15"])
def test_a_session_logs_token_usage_events_give_tokens_cost_and_time(tmp_path, session):
    """The CS715 harness logs a token_usage event (input_tokens, output_tokens, cost_usd) before each response, a
    timestamp on every event, and a session_summary with the totals: the ledger's totals are the log's own."""
    folder = REAL / "anthropic" / session
    log = json.loads(next(folder.glob("session_*.json")).read_text())
    events = log["events"]
    usage = [e["data"] for e in events if e["type"] == "token_usage"]
    summary = next(e["data"] for e in events if e["type"] == "session_summary")
    _, runs, steps = _ledger(tmp_path, folder)
    run, rows = runs[session], steps[session]
    # one figure per model call, in order, on one step of the call (the others null, not 0)
    assert [r["cost_usd"] for r in rows if r["cost_usd"] is not None] == pytest.approx([u["cost_usd"] for u in usage])
    assert [r["tokens_input"] for r in rows if r["tokens_input"] is not None] == [u["input_tokens"] for u in usage]
    assert [r["tokens_output"] for r in rows if r["tokens_output"] is not None] == [u["output_tokens"] for u in usage]
    assert (run["tokens_input"], run["tokens_output"]) == (summary["total_input_tokens"],
                                                           summary["total_output_tokens"])
    assert run["cost_usd"] == pytest.approx(summary["total_cost_usd"])
    assert (run["cost_source"], run["tokens_cached"], run["tokens_reasoning"]) == ("log", None, None)
    assert run["agent_model"] == summary["model"]
    # the turns' seconds run from the instruction to the last event: the session's length, bar its last lines
    t = [seconds_of(e["timestamp"]) for e in events]
    first = next(t[i] for i, e in enumerate(events) if e["type"] == "user_input")
    last = max(t[i] for i, e in enumerate(events) if e["type"] in ("api_response", "tool_result"))
    assert run["wall_seconds"] == pytest.approx(last - first, abs=1e-5)
    assert sum(r["wall_seconds"] or 0 for r in rows) == pytest.approx(run["wall_seconds"], abs=1e-5)
    assert all(r["wall_seconds"] is None or r["wall_seconds"] > 0 for r in rows)


@pytest.mark.slow
def test_a_calls_usage_is_on_the_step_whose_effect_is_checked(tmp_path):
    """Session 3's third response issues a mouse_move, a left_click and a screenshot: one click (checked) and a
    look. The call's tokens are on the click, not on the look."""
    _, _, steps = _ledger(tmp_path, REAL / "anthropic" / "cs715-session-3")
    rows = steps["cs715-session-3"]
    click = next(i for i, r in enumerate(rows) if r["action_type"] == "CLICK")
    assert rows[click]["cost_usd"] is not None and rows[click + 1]["action_type"] == "WAIT"
    assert (rows[click + 1]["cost_usd"], rows[click + 1]["tokens_input"], rows[click + 1]["wall_seconds"]) == (
        None, None, None)


@pytest.mark.slow
def test_messages_saved_whole_give_anthropic_usage_with_the_cached_input(tmp_path):
    """claude-steps saves each response as the API's Message (make_fixtures.py, anthropic-sdk-python's
    types/usage.py): Anthropic's input_tokens leaves the cache out, so the input is the three counts' sum."""
    folder = FIX / "anthropic" / "claude-steps"
    responses = [json.loads(p.read_text())["response"] for p in sorted(folder.glob("step_*.json"))]
    _, runs, steps = _ledger(tmp_path, folder)
    rows = steps["claude-steps"]
    assert len(rows) == len(responses)  # one action (or the final answer) a response
    for row, resp in zip(rows, responses):
        u = resp["usage"]
        assert row["tokens_input"] == u["input_tokens"] + u["cache_creation_input_tokens"] + u[
            "cache_read_input_tokens"]
        assert (row["tokens_output"], row["tokens_cached"]) == (u["output_tokens"], u["cache_read_input_tokens"])
        assert (row["cost_usd"], row["wall_seconds"], row["tokens_reasoning"]) == (None, None, None)
    run = runs["claude-steps"]
    assert run["tokens_input"] == sum(r["tokens_input"] for r in rows)
    assert (run["agent_model"], run["cost_usd"], run["cost_source"]) == (responses[0]["model"], None, None)


@pytest.mark.slow
def test_a_responses_api_response_gives_its_usage(tmp_path):
    """A Response the GA computer tool returned (amplifier-captures): input_tokens already holds the cached ones,
    output_tokens the reasoning ones."""
    folder = REAL / "openai" / "amplifier-captures" / "response-1"
    resp = json.loads((folder / "openai-response-1.json").read_text())
    u = resp["usage"]
    _, runs, steps = _ledger(tmp_path, folder)
    run = runs["response-1"]
    assert (run["tokens_input"], run["tokens_output"], run["tokens_cached"], run["tokens_reasoning"]) == (
        u["input_tokens"], u["output_tokens"], u["input_tokens_details"]["cached_tokens"],
        u["output_tokens_details"]["reasoning_tokens"])
    assert run["agent_model"] == resp["model"]
    # its only action's time would run to the next response, which the capture does not hold: unknown
    assert (run["cost_usd"], run["wall_seconds"]) == (None, None)


@pytest.mark.slow
def test_responses_created_at_gives_each_calls_seconds(tmp_path):
    """A list of responses: a response's seconds run from its created_at to the next one's; the last one, a final
    answer, to its own completed_at."""
    acts = [{"type": "computer_call", "call_id": f"c{i}", "action": {"type": "click", "x": 10, "y": 10}}
            for i in range(2)]
    outs = [{"type": "computer_call_output", "call_id": f"c{i}", "output": {"type": "computer_screenshot"}}
            for i in range(2)]
    responses = [
        {"model": "gpt-x", "created_at": 100, "usage": {"input_tokens": 10, "output_tokens": 2}, "output": [acts[0]]},
        {"created_at": 104.5, "input": [outs[0]], "usage": {"input_tokens": 20, "output_tokens": 3},
         "output": [acts[1]]},
        {"created_at": 110, "completed_at": 111.25, "input": [outs[1]], "usage": {"input_tokens": 30,
                                                                                  "output_tokens": 4},
         "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]},
    ]
    d = tmp_path / "runs" / "cua"
    d.mkdir(parents=True)
    (d / "responses.json").write_text(json.dumps(responses))
    _, runs, steps = _ledger(tmp_path, d)
    rows = steps["cua"]
    assert [(r["action_type"], r["tokens_input"], r["wall_seconds"]) for r in rows] == [
        ("CLICK", 10, 4.5), ("CLICK", 20, 5.5), ("DONE", 30, 1.25)]
    assert (runs["cua"]["tokens_input"], runs["cua"]["wall_seconds"]) == (60, 11.25)


# --- BrowserGym ----------------------------------------------------------------------------------------------

BROWSERGYM = REALRUNS / "browsergym-fork"


def _stats(run: Path) -> dict[int, dict[str, Any]]:
    out = {}
    for p in run.glob("step_*.pkl.gz"):
        v = safe_pickle.load_plain(p, source=p.name)
        out[int(p.name.split("_")[1].split(".")[0])] = v
    return out


@pytest.mark.realruns
@pytest.mark.skipif(not BROWSERGYM.is_dir(), reason="../shared/realruns/browsergym-fork is not here (the real "
                                                      "runs are kept outside the repository)")
def test_browsergym_steps_take_the_agent_and_the_environment_time(tmp_path):
    """Step N's seconds are the agent choosing action N and the environment running it (profiling); the
    StepInfo's own stats say the same (agent_elapsed of step_N, step_elapsed of step_N+1). The DemoAgent records
    no model usage: `n_token_*` count the observation's texts and are no token columns."""
    _, runs, steps = _ledger(tmp_path, BROWSERGYM)
    assert len(runs) == 10
    for run_id, rows in steps.items():
        info = _stats(BROWSERGYM / run_id)
        for r in rows:
            n = r["step_index"]
            here, nxt = info[n].get("stats") or {}, (info.get(n + 1) or {}).get("stats") or {}
            if "agent_elapsed" in here and "step_elapsed" in nxt:
                assert r["wall_seconds"] == pytest.approx(here["agent_elapsed"] + nxt["step_elapsed"], abs=1e-3)
            elif n + 1 not in info:  # the unfinished episode: the last action's answer was never saved
                assert r["wall_seconds"] is None
            else:  # the last action: its environment time only in the final StepInfo's profiling
                assert r["wall_seconds"] is not None and r["wall_seconds"] > here["agent_elapsed"]
            assert (r["tokens_input"], r["tokens_output"], r["cost_usd"]) == (None, None, None)
        run = runs[run_id]
        assert run["wall_seconds"] == pytest.approx(sum(r["wall_seconds"] or 0 for r in rows), abs=1e-5)
        assert (run["tokens_input"], run["cost_usd"], run["cost_source"]) == (None, None, None)
        summary = BROWSERGYM / run_id / "summary_info.json"
        if summary.is_file():  # the summary's agent time is in the run's, and its environment time bar the reset
            s = json.loads(summary.read_text())
            reset = info[0]["stats"]["step_elapsed"]
            assert s["stats.cum_agent_elapsed"] + s["stats.cum_step_elapsed"] - reset < run["wall_seconds"]


@pytest.mark.realruns
def test_agentlab_token_stats_are_read_and_a_zero_cost_beside_tokens_is_unknown(tmp_path):
    """AgentLab's LLM tracker adds input_tokens, output_tokens and cost to a step's stats (agentlab
    llm/tracking.py); a cost of 0 beside tokens is its "no price for this model", not a free call."""
    src = next((p for p in sorted(BROWSERGYM.glob("*webarena.210_30"))), None) if BROWSERGYM.is_dir() else None
    if src is None:
        pytest.skip("../shared/realruns/browsergym-fork is not here")
    run = tmp_path / "runs" / src.name
    shutil.copytree(src, run)
    for n, cost in ((0, 0.0123), (1, 0.0)):
        p = run / f"step_{n}.pkl.gz"
        v = safe_pickle.load_plain(p, source=p.name)
        assert "stats" in v
        # the pickle is rewritten as plain data: the restricted reader reads dicts as it reads the StepInfo
        v["stats"].update(input_tokens=1000 + n, output_tokens=50, cost=cost)
        v["profiling"] = {k: x for k, x in v["profiling"].items() if k != "__class__"}
        import pickle

        with gzip.open(p, "wb") as f:
            pickle.dump({k: x for k, x in v.items() if k != "__class__"}, f)
    _, runs, steps = _ledger(tmp_path, run)
    rows = steps[src.name]
    assert [(r["tokens_input"], r["tokens_output"], r["cost_usd"]) for r in rows[:3]] == [
        (1000, 50, 0.0123), (1001, 50, None), (None, None, None)]
    assert (runs[src.name]["tokens_input"], runs[src.name]["cost_usd"], runs[src.name]["cost_source"]) == (
        2001, 0.0123, "log")


# --- the native format and mapping files ---------------------------------------------------------------------

def _native(tmp_path: Path, name: str, usages: list[dict[str, Any] | None], seconds: list[float | None],
            run_extra: dict[str, Any] | None = None, src: str = "consent-overlay-on") -> Path:
    run = copy_run(SAMPLES / src, tmp_path / "runs" / name)
    meta = json.loads((run / "run.json").read_text())
    meta.update(run_id=name, **(run_extra or {}))
    (run / "run.json").write_text(json.dumps(meta))
    steps = read_steps(run)
    for s, u, w in zip(steps, usages, seconds):
        if u is not None:
            s["usage"] = u
        if w is not None:
            s["wall_seconds"] = w
    write_steps(run, steps)
    return run


@pytest.mark.slow
def test_the_native_format_carries_usage_and_seconds(tmp_path):
    n = len(read_steps(SAMPLES / "consent-overlay-on"))
    usages = [{"tokens_input": 1000 * (i + 1), "tokens_output": 20, "tokens_cached": 500, "cost_usd": 0.01}
              for i in range(n)]
    _native(tmp_path, "native-spend", usages, [1.5] * n)
    res, runs, steps = _ledger(tmp_path, tmp_path / "runs")
    assert res.ok
    run = runs["native-spend"]
    assert (run["tokens_input"], run["tokens_output"], run["tokens_cached"], run["tokens_reasoning"]) == (
        sum(1000 * (i + 1) for i in range(n)), 20 * n, 500 * n, None)
    assert run["cost_usd"] == pytest.approx(0.01 * n) and run["cost_source"] == "log"
    assert run["wall_seconds"] == pytest.approx(1.5 * n)
    assert [r["tokens_input"] for r in steps["native-spend"]] == [1000 * (i + 1) for i in range(n)]


@pytest.mark.slow
def test_run_level_totals_stand_for_steps_that_have_none(tmp_path):
    _native(tmp_path, "totals-only", [], [], {"usage": {"tokens_input": 9000, "tokens_output": 300,
                                                        "model": "m-1"}, "wall_seconds": 42.0})
    prices = tmp_path / "p.csv"
    prices.write_text("model,input_per_million,output_per_million\nm-1,2,8\n")
    _, runs, steps = _ledger(tmp_path, tmp_path / "runs", prices=prices)
    run = runs["totals-only"]
    assert (run["tokens_input"], run["wall_seconds"], run["cost_source"]) == (9000, 42.0, "prices")
    assert run["cost_usd"] == pytest.approx((9000 * 2 + 300 * 8) / 1e6)
    assert all(r["tokens_input"] is None and r["cost_usd"] is None for r in steps["totals-only"])


@pytest.mark.slow
def test_a_negative_token_count_makes_the_run_invalid_naming_the_field(tmp_path):
    _native(tmp_path, "bad-usage", [{"tokens_input": -5}], [None])
    res, runs, _ = _ledger(tmp_path, tmp_path / "runs")
    assert runs["bad-usage"]["status"] == "invalid"
    assert "steps.jsonl:1, field usage.tokens_input: -5 is under the minimum of 0" in runs["bad-usage"]["error"]
    assert runs["bad-usage"]["error"].endswith("[value_out_of_range]")


@pytest.mark.slow
def test_a_mapping_names_the_token_columns(tmp_path):
    """docs/mappings/claude-step-files.toml reads the step files' usage through JMESPath, as the reader does."""
    folder = FIX / "anthropic" / "claude-steps"
    logs = tmp_path / "logs"
    shutil.copytree(folder, logs / "claude-steps")
    _, _, want = _ledger(tmp_path, folder)
    _, runs, steps = _ledger(tmp_path, logs, mapping=ROOT / "docs" / "mappings" / "claude-step-files.toml")
    got = steps["claude-steps"]
    keep = ("tokens_input", "tokens_output", "tokens_cached")
    assert [[r[k] for k in keep] for r in got] == [[r[k] for k in keep] for r in want["claude-steps"]]
    assert runs["claude-steps"]["agent_model"] == "claude-sonnet-4-5"


@pytest.mark.slow
def test_a_mapping_timestamp_gives_the_time_since_the_previous_step(tmp_path):
    d = tmp_path / "logs" / "run1"
    d.mkdir(parents=True)
    (d / "log.json").write_text(json.dumps({"steps": [
        {"a": "tap", "at": "2026-01-01T10:00:00Z"}, {"a": "tap", "at": "2026-01-01T10:00:02.5Z"},
        {"a": "finish", "at": "2026-01-01T10:00:09Z"}]}))
    mapping = tmp_path / "m.toml"
    mapping.write_text('[run]\nfiles = "log.json"\nsteps = "steps"\n[step]\ntype = "a"\ntimestamp = "at"\n'
                       '[step.types]\ntap = "CLICK"\nfinish = "DONE"\n')
    _, runs, steps = _ledger(tmp_path, tmp_path / "logs", mapping=mapping)
    assert [r["wall_seconds"] for r in steps["run1"]] == [None, 2.5, 6.5]
    assert runs["run1"]["wall_seconds"] == 9.0


# --- prices --------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_prices_give_a_cost_where_the_log_has_tokens_and_the_model(tmp_path):
    prices = tmp_path / "prices.csv"
    prices.write_text("model,input_per_million,output_per_million,cached_per_million\n"
                      "claude-sonnet-4-5,3,15,0.3\n")
    res, runs, steps = _ledger(tmp_path, FIX / "anthropic" / "claude-steps", REAL / "openai", prices=prices)
    run, rows = runs["claude-steps"], steps["claude-steps"]
    for r in rows:
        fresh = r["tokens_input"] - r["tokens_cached"]
        assert r["cost_usd"] == pytest.approx((fresh * 3 + r["tokens_cached"] * 0.3 + r["tokens_output"] * 15) / 1e6)
    assert run["cost_source"] == "prices" and run["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows))
    # gpt-5.6-sol is not in the list: no cost, and the score says so once
    assert (runs["response-1"]["cost_usd"], runs["response-1"]["cost_source"]) == (None, None)
    said = [p for p in res.problems if p.slug == "price_missing"]
    assert len(said) == 1 and "'gpt-5.6-sol'" in said[0].message and said[0].severity == "warning"
    assert res.ok  # a warning: the runs are scored


@pytest.mark.slow
def test_a_changed_price_list_rescores_the_runs_it_prices(tmp_path):
    """The price list is part of every run's digest: the same list skips the runs, another one rescores them."""
    prices, ledger_dir = tmp_path / "p.csv", tmp_path / "L"
    prices.write_text("model,input_per_million,output_per_million\nclaude-sonnet-4-5,3,15\n")
    run = FIX / "anthropic" / "claude-steps"
    first = trajcheck.score([run], out=ledger_dir, jobs=1, prices=prices)
    cost = trajcheck.runs(ledger_dir)["cost_usd"].iloc[0]
    assert trajcheck.score([run], out=ledger_dir, jobs=1, prices=prices).skipped == ["claude-steps"]
    prices.write_text("model,input_per_million,output_per_million\nclaude-sonnet-4-5,6,30\n")
    again = trajcheck.score([run], out=ledger_dir, jobs=1, prices=prices)
    assert (first.scored, again.scored) == (1, 1)
    assert trajcheck.runs(ledger_dir)["cost_usd"].iloc[0] == pytest.approx(2 * cost)


@pytest.mark.slow
def test_a_recorded_cost_is_never_replaced_by_prices(tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."claude-3-5-sonnet-*"]\ninput_per_million = 100\noutput_per_million = 100\n')
    _, runs, _ = _ledger(tmp_path, REAL / "anthropic" / "cs715-session-3", prices=prices)
    run = runs["cs715-session-3"]
    assert run["cost_source"] == "log" and run["cost_usd"] < 0.1  # the log's 0.066, not 100 $/M x 19,813


@pytest.mark.slow
def test_without_a_model_there_is_no_cost_and_the_score_says_so(tmp_path):
    n = len(read_steps(SAMPLES / "consent-overlay-on"))
    run = _native(tmp_path, "no-model", [{"tokens_input": 100, "tokens_output": 10}] * n, [None] * n)
    meta = json.loads((run / "run.json").read_text())
    meta["agent"] = {"name": "x"}
    (run / "run.json").write_text(json.dumps(meta))
    prices = tmp_path / "p.csv"
    prices.write_text("model,input_per_million,output_per_million\nscripted/1,1,1\n")
    res, runs, _ = _ledger(tmp_path, tmp_path / "runs", prices=prices)
    assert (runs["no-model"]["cost_usd"], runs["no-model"]["cost_source"]) == (None, None)
    said = [p for p in res.problems if p.slug == "price_missing"]
    assert len(said) == 1 and "names no model" in said[0].message


@pytest.mark.parametrize(("text", "suffix", "says"), [
    ("model,input,output\nm,1,2\n", ".csv", "needs the columns model, input_per_million"),
    ("model,input_per_million,output_per_million\nm,1,-2\n", ".csv", "line 2: output_per_million must be"),
    ("model,input_per_million,output_per_million\nm,1,2\nM,1,2\n", ".csv", "line 3: 'M' is listed twice"),
    ("model,input_per_million,output_per_million\nm,,2\n", ".csv", "line 2: input_per_million is missing"),
    ('[models."m"]\ninput_per_million = "cheap"\noutput_per_million = 1\n', ".toml", 'models."m": input_per_million'),
    ("[models]\n", ".toml", "a table per model"),
    ("m 1 2\n", ".txt", "a .csv or a .toml file"),
])
def test_a_bad_price_list_is_a_usage_error_naming_the_place(tmp_path, text, suffix, says):
    prices = tmp_path / f"prices{suffix}"
    prices.write_text(text)
    res = CliRunner().invoke(app, ["score", str(FIX / "anthropic" / "claude-steps"), "--out", str(tmp_path / "L"),
                                   "--prices", str(prices), "-q"])
    assert res.exit_code == 2, res.output
    assert says in res.stderr and str(prices) in res.stderr
    assert not (tmp_path / "L").exists()  # checked before anything is written


def test_a_price_is_found_by_its_name_or_a_pattern_never_by_a_prefix():
    prices = (Price("gpt-4o", 2.5, 10), Price("claude-3-5-*", 3, 15))
    assert price_of("GPT-4o", prices) is prices[0]
    assert price_of("gpt-4o-mini", prices) is None
    assert price_of("claude-3-5-sonnet-20241022", prices) is prices[1]
    assert price_of(None, prices) is None
    # cached input at the input price without a price of its own
    assert prices[0].cost(Usage(1_000_000, 0, 400_000)) == pytest.approx(2.5)
    assert Price("x", 2, 0, 0.5).cost(Usage(1_000_000, 0, 400_000)) == pytest.approx(0.6 * 2 + 0.4 * 0.5)
    assert prices[0].cost(Usage(tokens_input=100)) is None  # no output count: no cost


def test_read_prices_keeps_the_file_order_for_patterns(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('[models."a-*"]\ninput_per_million = 1\noutput_per_million = 2\n'
                 '[models."a-b-*"]\ninput_per_million = 5\noutput_per_million = 6\ncached_per_million = 0.5\n')
    got = read_prices(p)
    assert got == (Price("a-*", 1.0, 2.0), Price("a-b-*", 5.0, 6.0, 0.5))
    assert price_of("a-b-c", got) is got[0]  # the first pattern that matches


# --- the analyzer and the sparse timelines -------------------------------------------------------------------

def test_a_mean_has_students_t_interval_never_below_zero():
    from scipy.stats import t

    from trajcheck.base.stats import mean_interval

    m = mean_interval([1.0, 2.0, 6.0])
    assert m is not None and (m.value, m.n, m.method) == (3.0, 3, "t")
    h = t.ppf(0.975, 2) * math.sqrt(((1 - 3) ** 2 + (2 - 3) ** 2 + (6 - 3) ** 2) / 2) / math.sqrt(3)
    assert (m.low, m.high) == (pytest.approx(max(0.0, 3 - h)), pytest.approx(3 + h))
    assert m.low == 0.0  # 3 - h is below 0: a cost or a time is not
    assert mean_interval([1.0, 2.0, 6.0], floor=None).low == pytest.approx(3 - h)
    one = mean_interval([4.0])
    assert one is not None and (one.low, one.high) == (None, None)
    assert mean_interval([]) is None


def test_spend_is_null_not_zero_when_the_log_holds_nothing():
    steps, run = assess([None, None], [None, None], None, None, "m", (Price("m", 1, 1),))
    assert all(s.tokens_input is None and s.cost_usd is None and s.wall_seconds is None for s in steps)
    assert (run.tokens_input, run.cost_usd, run.wall_seconds, run.cost_source, run.unpriced) == (
        None, None, None, None, ())


def test_a_run_with_a_step_of_no_price_gets_no_total_cost():
    """A cost for part of a run's tokens would understate it: the run's cost is null, its models named."""
    usages = [Usage(100, 10, model="a"), Usage(100, 10, model="b")]
    steps, run = assess(usages, [None, None], None, None, None, (Price("a", 1, 1),))
    assert steps[0].cost_usd == pytest.approx(110 / 1e6) and steps[1].cost_usd is None
    assert (run.cost_usd, run.cost_source, run.unpriced) == (None, None, ("b",))


def test_a_model_calls_usage_goes_to_its_high_risk_action():
    """Three calls: [click Submit, screenshot], [type, key Return], and a final answer. Each call's usage is on
    its action whose effect is checked (the high-risk one); the answer's is left for the DONE."""
    u1, u2, u3 = Usage(100, 1), Usage(200, 2), Usage(300, 3)
    timeline = [
        ("usage", u1, 2.0), ("act", Action("CLICK", 1, 1), "Click Submit", "a", 0),
        ("act", Action("WAIT", extra={"tool_action": "screenshot"}), None, "b", 0), ("frame", "f1"),
        ("usage", u2, 3.0), ("act", Action("TYPE", text="hi"), None, "c", 1),
        ("act", Action("KEY_PRESS", keys="Return"), None, "d", 1), ("frame", "f2"),
        ("usage", u3, 0.5),
    ]
    steps = steps_of(timeline, {}, "t.json", frozenset({"screenshot"}))
    assert [(s.action.type, s.usage, s.wall_seconds) for s in steps] == [
        ("CLICK", u1, 2.0), ("WAIT", None, None), ("TYPE", None, None), ("KEY_PRESS", u2, 3.0)]
    assert trailing_usage(timeline) == (u3, 0.5)
    assert u1 + u2 == Usage(300, 3)


# --- compare, export and score show the spend only where the ledger has it ----------------------------------

ARMS = ("consent-overlay", "terms-checkbox", "drift-loop")


def _priced_runs(tmp_path: Path, with_cost: bool = True) -> dict[tuple[str, int], float]:
    """Both arms of three sample tasks, each step with a cost (the step's index in cents, plus a cent per run)
    and 2 + index seconds; returns each step's cost by (run_id, step_index)."""
    costs: dict[tuple[str, int], float] = {}
    for k, task in enumerate(ARMS):
        for arm in ("on", "off"):
            name = f"{task}-{arm}"
            steps = read_steps(SAMPLES / name)
            usages, seconds = [], []
            for s in steps:
                cost = round(0.01 * s["index"] + 0.01 * k, 6)
                costs[(name, s["index"])] = cost
                usages.append({"tokens_input": 1000, "tokens_output": 10, "cost_usd": cost} if with_cost else None)
                seconds.append(2.0 + s["index"])
            _native(tmp_path, name, usages, seconds, src=name)
    return costs


def _t_interval(xs: list[float]) -> tuple[float, float, float]:
    from scipy.stats import t

    m = sum(xs) / len(xs)
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    h = t.ppf(0.975, len(xs) - 1) * s / math.sqrt(len(xs))
    return m, max(0.0, m - h), m + h  # a cost is never negative: the interval stops at 0


@pytest.mark.slow
def test_compare_gives_cost_per_run_success_and_the_spend_on_no_effect_steps_and_false_claims(tmp_path):
    costs = _priced_runs(tmp_path)
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", jobs=1)
    got = run_json("compare", str(tmp_path / "L"), "--by", "config.perceptual_verifier")
    runs = trajcheck.runs(tmp_path / "L")
    steps = trajcheck.steps(tmp_path / "L")
    for arm in got["arms"]:
        mine = runs[runs["config_perceptual_verifier"] == (arm["arm"] == "true")]
        run_cost = {rid: sum(c for (r, _), c in costs.items() if r == rid) for rid in mine["run_id"]}
        spend = arm["spend"]
        m, low, high = _t_interval(list(run_cost.values()))
        assert spend["cost_per_run"] == {"mean": round(m, 6), "n": 3, "low": round(low, 6), "high": round(high, 6),
                                         "method": "t"}
        wins = int((mine["eval_final_verdict"] == "pass").sum())
        assert spend["cost_per_success"] == (round(sum(run_cost.values()) / wins, 6) if wins else None)
        assert spend["steps_per_success"] == (round(int(mine["n_steps"].sum()) / wins, 6) if wins else None)
        dead = steps[steps["run_id"].isin(mine["run_id"]) & (steps["action_effect_observed"] == False)]  # noqa: E712
        assert spend["cost_no_effect_steps"] == round(sum(costs[(r, i)] for r, i in zip(dead["run_id"],
                                                                                    dead["step_index"])), 6)
        lies = mine[mine["false_claim"] == True]["run_id"]  # noqa: E712
        assert spend["cost_false_claims"] == round(sum(run_cost[r] for r in lies), 6)
        secs = [sum(2.0 + i for (r, i) in costs if r == rid) for rid in mine["run_id"]]
        assert spend["seconds_per_run"]["mean"] == round(sum(secs) / 3, 6)
    off = next(a for a in got["arms"] if a["arm"] == "false")
    assert off["spend"]["cost_per_success"] is None and off["spend"]["cost_false_claims"] > 0  # no pass, two lies
    table = CliRunner().invoke(app, ["compare", str(tmp_path / "L"), "--by", "config.perceptual_verifier"])
    assert table.exit_code == 0 and "cost/run" in table.stdout and "seconds/run" in table.stdout


@pytest.mark.slow
def test_export_shows_the_spend_columns_it_has_data_for(tmp_path, sample_ledger):
    from trajcheck.queries import tables

    plain = tables.build(sample_ledger, "summary")
    assert not {"cost/run", "seconds/run", "steps/success"} & set(plain.columns)  # no cost, no time: no columns
    assert "cost/run" not in tables.build(sample_ledger, "compare", "config.perceptual_verifier").columns
    _priced_runs(tmp_path, with_cost=False)  # time only
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "T", jobs=1)
    timed = tables.build(tmp_path / "T", "summary", "config.perceptual_verifier")
    assert timed.columns[-2:] == ("steps/success", "seconds/run")
    shutil.rmtree(tmp_path / "runs")
    _priced_runs(tmp_path)
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "C", jobs=1)
    both = tables.build(tmp_path / "C", "compare", "config.perceptual_verifier")
    assert both.columns[-6:] == ("cost/run", "cost/success", "steps/success", "seconds/run", "cost no-effect steps",
                                 "cost false claims")
    off = next(r for r in both.rows if r[0].text == "false")
    assert off[-5].text == "-" and off[-1].text.startswith("$") and off[-1].text.endswith("%)")
    assert "Student's t" in both.caption


@pytest.mark.slow
def test_score_says_what_the_runs_cost_only_when_they_record_it(tmp_path):
    _priced_runs(tmp_path)
    res = CliRunner().invoke(app, ["score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "-q", "-j", "1"])
    assert res.exit_code == 0, res.output
    line = next(line for line in res.stderr.splitlines() if line.startswith("spend:"))
    assert "over 6 of 6 runs (log 6)" in line and " s over 6 of 6 runs" in line
    res = CliRunner().invoke(app, ["score", str(SAMPLES / "consent-overlay-on"), "--out", str(tmp_path / "S"), "-q"])
    assert res.exit_code == 0 and "spend:" not in res.stderr
