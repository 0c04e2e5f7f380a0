"""The adapter kit: the readers, problem collection, claiming and frame helpers every format reader shares."""

from __future__ import annotations

import base64
import io
import subprocess
import sys

import pytest
from PIL import Image

from trajcheck.readers.kit import reading as kit
from trajcheck.base.errors import Problem, RunFormatError

from conftest import ROOT


def _png(w: int = 3, h: int = 2) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (200, 10, 10)).save(buf, "PNG")
    return buf.getvalue()


def test_problems_fill_in_the_run_and_the_main_file():
    probs = kit.Problems("run-7", "log.json")
    probs.error("schema", "bad", line=3, field="a.b", hint="fix it")
    probs.warn("screenshot_missing", "gone", file="other.png")
    assert probs == [Problem("schema", "bad", run="run-7", file="log.json", line=3, field="a.b", hint="fix it"),
                     Problem("screenshot_missing", "gone", run="run-7", file="other.png", severity="warning")]
    assert probs.warnings() == [probs[1]]
    with pytest.raises(RunFormatError) as exc:
        probs.raise_errors()
    assert [p.slug for p in exc.value.problems] == ["schema"]


def test_raise_errors_names_at_most_max_problems_and_counts_the_rest():
    probs = kit.Problems("r")
    for i in range(kit.MAX_PROBLEMS + 3):
        probs.error("schema", f"error {i}")
    probs.warn("screenshot_missing", "only a warning")
    with pytest.raises(RunFormatError) as exc:
        probs.raise_errors()
    got = exc.value.problems
    assert len(got) == kit.MAX_PROBLEMS + 1
    assert (got[-1].slug, got[-1].message, got[-1].run) == ("more_problems", "3 more errors not shown", "r")
    kit.Problems("r").raise_errors()  # no error: no exception


def test_array_item_lines_locates_each_element_of_the_top_level_array_or_of_a_key():
    text = '[\n  {"a": 1},\n\n  {"b": [1,\n 2]}, 3\n]'
    assert kit.array_item_lines(text) == [2, 4, 5]
    nested = '{"x": {"history": 0},\n "history": [\n {"i": 0},\n {"i": 1}]}'
    assert kit.array_item_lines(nested, "history") == [3, 4]
    assert kit.array_item_lines("\ufeff[1,\n2]") == [1, 2]
    assert kit.array_item_lines('{"other": []}', "history") == []
    assert kit.array_item_lines('{"history": 5}', "history") == []


def test_load_json_tells_a_file_holding_null_from_one_that_cannot_be_read(tmp_path):
    (tmp_path / "null.json").write_text("null")
    (tmp_path / "bad.json").write_text('{"a": ')
    probs: list[Problem] = []
    assert kit.load_json(tmp_path / "null.json", run="r", rel="null.json", problems=probs) == (None, "null")
    assert probs == []
    assert kit.load_json(tmp_path / "bad.json", run="r", rel="bad.json", problems=probs) is None
    assert [(p.slug, p.file, p.line) for p in probs] == [("json_invalid", "bad.json", 1)]
    assert kit.read_json_file(tmp_path / "missing.json", run="r", rel="missing.json", problems=probs) is None
    assert probs[-1].slug == "file_missing"


def test_jsonl_values_are_lazy_and_json_or_jsonl_reads_either():
    probs: list[Problem] = []
    values = kit.jsonl_values('{"a": 1}\nnot json\n[2]\n', run="r", rel="t.jsonl", problems=probs)
    assert next(values) == {"a": 1} and probs == []  # the bad line is not reached yet
    assert list(values) == [[2]] and [(p.slug, p.line) for p in probs] == [("json_invalid", 2)]
    assert kit.load_json_or_jsonl('{"a": 1}\n{"b": 2}\n', run="r", rel="t.jsonl", problems=[]) == [{"a": 1}, {"b": 2}]
    assert kit.load_json_or_jsonl('{"steps": []}', run="r", rel="t.json", problems=[]) == {"steps": []}
    probs = []
    assert kit.load_json_or_jsonl("{", run="r", rel="t.json", problems=probs) is None and len(probs) == 1


def test_decode_image_accepts_base64_and_data_urls_and_says_why_it_refuses():
    png = _png()
    b64 = base64.b64encode(png).decode()
    assert kit.decode_image(b64) == (png, "png")
    assert kit.decode_image("data:image/png;base64," + b64) == (png, "png")
    for text, slug, kind in (("not base64!", "frame_unreadable", "base64"),
                             (base64.b64encode(b"plain text").decode(), "frame_unreadable", "format"),
                             ("A" * (kit.MAX_FRAME_BYTES * 4 // 3 + 8), "frame_too_large", "size")):
        with pytest.raises(kit.BadImage) as exc:
            kit.decode_image(text)
        assert (exc.value.slug, exc.value.kind) == (slug, kind)
    assert str(exc.value) == "is over the size limit"


def test_frames_keep_inline_images_and_refuse_paths_out_of_the_run(tmp_path):
    probs: list[Problem] = []
    frames = kit.Frames(tmp_path, "r", "log.json", probs)
    data_url = "data:image/png;base64," + base64.b64encode(_png()).decode()
    assert frames.from_any(data_url, "steps[0].screenshot") == "inline/frame-0000.png"
    assert frames.from_any("shots/a.png", "steps[1].screenshot") == "shots/a.png"
    assert frames.from_any("../escape.png", "steps[2].screenshot") is None
    assert frames.from_base64("!!", "steps[3].screenshot") is None
    assert list(frames.inline) == ["inline/frame-0000.png"]
    assert [(p.slug, p.field, p.message) for p in probs] == [
        ("path_escapes_run", "steps[2].screenshot", "screenshot path '../escape.png' leaves the run directory"),
        ("frame_unreadable", "steps[3].screenshot",
         "the screenshot is not valid base64 (Only base64 data is allowed)")]
    assert all(p.severity == "warning" and p.file == "log.json" for p in probs)


def test_looks_like_base64_tells_an_image_from_a_path():
    assert kit.looks_like_base64("data:image/png;base64,AAAA")
    assert kit.looks_like_base64("iVBORw0KGgo" * 30)
    assert not kit.looks_like_base64("screenshots/step_1.png")
    assert not kit.looks_like_base64("a" * 300 + ".png")


def test_relocated_finds_an_absolute_path_again_inside_the_run(tmp_path):
    (tmp_path / "shots").mkdir()
    (tmp_path / "shots" / "s1.png").write_bytes(_png())
    (tmp_path / "s2.png").write_bytes(_png())
    assert kit.relocated(tmp_path, "/tmp/agent_xyz/shots/s1.png") == "shots/s1.png"
    assert kit.relocated(tmp_path, "C:\\Users\\me\\run\\s2.png") == "s2.png"
    assert kit.relocated(tmp_path, "/elsewhere/none.png") is None


def test_first_file_and_image_sizes(tmp_path):
    (tmp_path / "b.jpg").write_bytes(b"x")
    (tmp_path / "c.png").write_bytes(_png(7, 5))
    assert kit.first_file(tmp_path, ["a.png", "b.jpg", "c.png"]) == "b.jpg"
    assert kit.first_file(tmp_path, ["a.png"]) is None
    assert kit.png_size(tmp_path / "c.png") == (7, 5)
    assert kit.png_size(tmp_path / "b.jpg") is None
    assert kit.image_size(tmp_path / "c.png") == (7, 5)
    assert kit.image_size(tmp_path / "b.jpg") is None


def test_claiming_by_file_name_and_by_content(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "trace.zip").write_bytes(b"")
    assert kit.claims_plain_dir(run, "trace.zip") and not kit.claims_plain_dir(run, "other.json")
    (run / "run.json").write_text("{}")
    assert not kit.claims_plain_dir(run, "trace.zip")  # a native run is never claimed by an adapter
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "b.json").write_text('{"mark": 1}')
    (logs / "a.jsonl").write_text('{"mark": 2}')
    (logs / "c.json").write_text('{"other": 3, "text": "a string that says \\"mark\\""}')
    # by the shape of the parsed data: a top-level "mark", never the word inside a string
    # (a JSONL file is the list of its lines' values)
    sniff = kit.Sniffer(lambda v: "a marked log" if any(isinstance(x, dict) and "mark" in x for x in
                                                        (v if isinstance(v, list) else [v])) else None, "default.json")
    assert sniff.claims(logs) and not sniff.claims(run)
    assert sniff.claim(logs).why == "a.jsonl is a marked log"
    (logs / "a.jsonl").unlink()
    (logs / "b.json").unlink()
    assert not sniff.claims(logs)
    assert sniff.claim(logs).why == "c.json is an object with keys other, text: not a log of this format"
    (logs / "b.json").write_text('{"mark": 1}')
    (logs / "a.jsonl").write_text('{"mark": 2}')
    probs: list[Problem] = []
    assert sniff.pick(logs, "logs", probs) == "a.jsonl"
    assert [(p.slug, p.file, p.message) for p in probs] == [
        ("steps_ambiguous", "b.json", "a.jsonl, b.json are all transcripts; a.jsonl is read")]
    assert sniff.pick(run, "run", []) == "default.json"


def test_num_and_run_id_of(tmp_path):
    assert [kit.num(v) for v in (3, 2.5, True, "4", None)] == [3.0, 2.5, None, None, None]
    assert kit.run_id_of(tmp_path / "task-9" / ".", "shown") == "task-9"


@pytest.mark.slow
@pytest.mark.parametrize("module", ["trajcheck.readers.adapters", "trajcheck.readers.kit.reading", "devtools.formatsdoc",
                                    "trajcheck.readers.discovery", "trajcheck.readers.mapping.reader"])
def test_any_module_can_be_imported_first_and_every_reader_is_registered(module):
    """Whichever module comes first (the adapters no longer import discovery; discovery imports them when first
    needed), the readers are all registered once."""
    code = (f"import {module}\nfrom trajcheck.readers import discovery\n"
            "print(','.join(discovery.reader_names()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == ("trajcheck.run/1,webvoyager,browsergym,browser-use,playwright-trace,osworld,"
                           "anthropic-messages,openai-responses,ui-tars")


def test_adapters_import_the_kit_not_each_other():
    """Each harness is a package of its own (``core/readers/adapters/<harness>/``) whose parts are named alike
    (``reader``, ``actions``, ...); it imports shared helpers from the kit (``from ...kit``) and, beside it
    (``from .``), only its own parts, never another harness's package."""
    adapters = ROOT / "core" / "readers" / "adapters"
    harnesses = sorted(p.name for p in adapters.iterdir() if (p / "__init__.py").is_file())
    assert harnesses == ["anthropic", "browser_use", "browsergym", "openai", "osworld", "playwright", "ui_tars",
                         "webvoyager"]
    assert sorted(p.name for p in adapters.glob("*.py")) == ["__init__.py"]  # no harness's module loose beside them
    kit_used = set()
    for harness in harnesses:
        parts = {p.stem for p in (adapters / harness).glob("*.py")} - {"__init__"}
        # every harness's action grammar is its `actions`; Playwright's actions are the trace's calls (`events`)
        assert {"reader", "actions" if harness != "playwright" else "events"} <= parts, (harness, parts)
        for path in sorted((adapters / harness).glob("*.py")):
            lines = path.read_text().splitlines()
            beside = {line.split()[1].lstrip(".") for line in lines
                      if line.startswith("from .") and not line.startswith("from ..") and line.split()[1] != "."}
            kit_used |= {line.split()[1] for line in lines if line.startswith("from ...kit")}
            others = {line.split()[1] for line in lines if line.startswith("from ..") and
                      not line.startswith("from ...")}
            assert beside <= parts, (harness, path.name, beside)
            assert not others, (harness, path.name, others)  # `from ..webvoyager`: another harness's package
    assert kit_used >= {"...kit.reading", "...kit.reader"}, kit_used
    assert not (ROOT / "core" / "readers" / "kit" / "reading.py").read_text().count("from ..adapters")


def test_image_size_of_a_header_that_claims_a_bomb_is_none(tmp_path):
    """A PNG whose header claims 40000x40000 (Pillow refuses it as a decompression bomb) has no usable size:
    None, not an exception escaping the reader."""
    import struct
    import zlib

    from trajcheck.readers.kit.reading import image_size

    ihdr = struct.pack(">IIBBBBB", 40000, 40000, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    png = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + struct.pack(">I", zlib.crc32(chunk))
    path = tmp_path / "step_1.png"
    path.write_bytes(png + b"\x00\x00\x00\x00IEND\xaeB`\x82")
    assert image_size(path) is None


def test_no_adapter_claims_a_folder_without_a_file_in_it(tmp_path):
    """Discovery leaves the adapters unloaded for a folder with only folders in it (a folder of runs): that
    holds only while every adapter claims a directory by a file in it. Each adapter's run (a fixture, or the
    file it claims by) sits one level down; the folder above is claimed by none."""
    import shutil

    from trajcheck.readers.adapters import ALL

    fixtures = ROOT / "tests" / "fixtures"
    runs = {"anthropic-messages": fixtures / "anthropic" / "feedback-2x",
            "browser-use": fixtures / "browser_use_new" / "recipe-search",
            "openai-responses": fixtures / "openai" / "cua-newsletter",
            "osworld": next((fixtures / "osworld").rglob("traj.jsonl")).parent,
            "playwright-trace": fixtures / "playwright_trace" / "notes-trace",
            "ui-tars": fixtures / "ui_tars" / "workspace"}
    for reader in ALL:
        outer = tmp_path / reader.name
        inner = outer / "run"
        if reader.name in runs:
            shutil.copytree(runs[reader.name], inner)
        else:  # webvoyager and browsergym runs live in ../shared/realruns: the file each claims by
            inner.mkdir(parents=True)
            claimed_by = {"webvoyager": "interact_messages.json", "browsergym": "exp_args.pkl"}[reader.name]
            (inner / claimed_by).write_text("[]")
        assert reader.claims(inner), reader.name
        assert [r.name for r in ALL if r.claims(outer)] == [], reader.name


@pytest.mark.slow
def test_a_folder_of_native_runs_is_found_and_checked_without_the_adapters(tmp_path):
    """`trajcheck score` of a folder of native runs, unchanged since the last score, imports no adapter."""
    import shutil

    from conftest import SAMPLES

    for name in ("consent-overlay-on", "captcha-blocked"):
        shutil.copytree(SAMPLES / name, tmp_path / "runs" / name)
    code = ("import sys\nfrom trajcheck.cli.main import main\n"
            f"sys.argv = ['trajcheck', 'score', {str(tmp_path / 'runs')!r}, '--out', {str(tmp_path / 'L')!r}, '-q']\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print(code, 'trajcheck.readers.adapters' in sys.modules)\n")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert first.stdout.split()[-2:] == ["0", "False"], first.stdout + first.stderr
    assert again.stdout.split()[-2:] == ["0", "False"], again.stdout + again.stderr
