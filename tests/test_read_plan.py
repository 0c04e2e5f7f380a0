"""Issue 48, item 1: each needed screen read once. A check on any frame that a frame decided reads no further frame,
and what the final read saw decides it too; a check about a part of a frame takes its lines from the frame's whole
read; the fallback passes read only what could hold the text (the shaky lines like it, the dimmed part of a page
that a real dialog dims); the stages are matched by their new lines. OCR is replaced by canned lines here: what is
tested is which reads are made."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from trajcheck.analyzers import screencheck
from trajcheck.analyzers.screentext import ScreenRead, TextLine
from trajcheck.base.box import Box
from trajcheck.media import contractread, frames, ocr
from trajcheck.media.screenread import ScreenPlan, ScreenReader

from conftest import ROOT, SAMPLES

#: Real desktop screenshots (ScreenAgent, 1024x768): GIMP's dark panels around a light dialog, and VS Code.
SCREENAGENT = ROOT / "tests" / "fixtures" / "real" / "screenagent"
GIMP_DIALOG = SCREENAGENT / "1358cf45f029484ebd3db124bda80159" / "images" / "2024-01-13_17-47-28-253100.jpg"
VSCODE = SCREENAGENT / "08a2def941d942ffb542ba0ba3d8aa99" / "images" / "2024-01-13_21-40-18-219712.jpg"
#: A sample page dimmed behind a real cookie dialog.
CONSENT = SAMPLES / "consent-overlay-on" / "frames" / "001.png"


LINE = Box(10, 100, 300, 120)


def _line(text: str, conf: float = 0.95, box: Box = LINE) -> TextLine:
    return TextLine(text, conf, box)


@pytest.fixture
def reads(monkeypatch) -> list[tuple[bytes | None, Box]]:
    """Every read asked of OCR (frame digest, box); what each frame shows is set in ``shows``."""
    made: list[tuple[bytes | None, Box]] = []

    def fake(eng, digest, luma, box, scale):
        made.append((digest, box))
        if (digest, box) in REREAD:
            return [_line("Brightness-Contrast", 0.95, box)]
        return [x for x in SHOWS.get(digest, ()) if box.left <= x.box.left and box.top <= x.box.top
                and x.box.right <= box.right and x.box.bottom <= box.bottom]

    monkeypatch.setattr(ocr, "cached_lines", fake)
    monkeypatch.setattr(ocr, "islands", lambda *a: [])
    monkeypatch.setattr(ocr, "faint", lambda *a: [])
    SHOWS.clear()
    REREAD.clear()
    return made


SHOWS: dict[bytes | None, tuple[TextLine, ...]] = {}
REREAD: set[tuple[bytes | None, Box]] = set()


def _run(n: int) -> SimpleNamespace:
    steps = [SimpleNamespace(index=k + 1, frame_pre=f"f{k}", frame_post=f"f{k + 1}") for k in range(n)]
    return SimpleNamespace(steps=steps, screen_width=1024)


def _plan(checks: list[dict], goal: str | None = None) -> contractread.ContractReads:
    sp = ScreenPlan("always", [])
    sp.used = ScreenReader(ocr.OcrEngine(None, "fake"))
    return contractread.ContractReads.of({"checks": checks}, False, sp, goal)


def _score(cr: contractread.ContractReads) -> list[bool | None]:
    return [screencheck.evaluate(str(c["type"]), c, ev)[0] for (_, c), ev in
            zip(sorted(cr.checks), [cr.evidence()[p] for p, _ in sorted(cr.checks)])]


def _steps(cr: contractread.ContractReads, n: int) -> None:
    frame = frames.decode(VSCODE)
    run = _run(n)
    for i in range(n):
        cr.read_step(run, i, (frame, frame), (bytes([i]), bytes([i + 1])))


def test_a_check_on_any_frame_decided_on_one_frame_reads_no_further_frame(reads):
    SHOWS[b"\x01"] = (_line("Order confirmed"),)
    cr = _plan([{"type": "text_present", "text": "Order confirmed", "frame": "any"},
                {"type": "text_absent", "text": "Order confirmed", "frame": "any"}])
    _steps(cr, 4)
    assert [d for d, _b in reads] == [b"\x00", b"\x01"]  # frames 2, 3 and 4 are not read
    assert _score(cr) == [True, False]


def test_an_undecided_check_on_any_frame_reads_every_frame(reads):
    SHOWS.update(dict.fromkeys([b"\x00", b"\x01", b"\x02", b"\x03"], (_line("Your cart"),)))
    cr = _plan([{"type": "text_present", "text": "Order confirmed", "frame": "any"}])
    _steps(cr, 3)
    assert [d for d, _b in reads] == [b"\x00", b"\x01", b"\x02", b"\x03"]
    assert _score(cr) == [False]


def test_what_the_final_read_saw_decides_a_check_on_any_frame(reads):
    SHOWS[b"\x02"] = (_line("0rder confirmed", 0.41),)  # the whole frame read at 1x: shaky
    cr = _plan([{"type": "text_present", "text": "Order confirmed", "frame": "any"},
                {"type": "text_present", "text": "Order confirmed"}])
    _steps(cr, 2)
    final = frames.decode(VSCODE)
    seen = [ScreenRead(Box(0, 80, 400, 140), (_line("Order confirmed", 0.97),))]  # its region read at 2x
    cr.read_final(_run(2), final, "f2", b"\x02", seen)
    assert _score(cr) == [True, True]
    assert cr.evidence()[1].views[-1].frame == "final"


def test_a_title_band_check_takes_its_lines_from_the_whole_read(reads):
    SHOWS[b"\x01"] = (_line("study.py - Visual Studio Code", 0.93, Box(300, 4, 700, 18)), _line("print(str1)"))
    cr = _plan([{"type": "text_present", "text": "study.py", "area": "title", "frame": 1},
                {"type": "text_present", "text": "Visual Studio Code", "frame": 1}])
    _steps(cr, 1)
    assert reads == [(b"\x01", Box(0, 0, 1024, 768))]  # the band is not read again
    assert _score(cr) == [True, True]


def test_a_title_band_whose_lines_are_shaky_is_read_again(reads):
    SHOWS[b"\x01"] = (_line("study.py - Visual Studio Code", 0.52, Box(300, 4, 700, 18)),)
    cr = _plan([{"type": "text_present", "text": "study.py", "area": "title", "frame": 1},
                {"type": "text_present", "text": "print", "frame": 1}])
    _steps(cr, 1)
    assert (b"\x01", Box(0, 0, 1024, 64)) in reads


def test_only_the_shaky_lines_that_could_hold_the_text_are_read_again(reads):
    like, other = Box(8, 224, 140, 237), Box(600, 400, 900, 420)
    SHOWS[b"\x01"] = (_line("Brightnes-Contrast...", 0.55, like), _line("Tone Mapping >", 0.4, other))
    REREAD.add((b"\x01", Box(0, 216, 148, 245)))  # the line like the text, widened by the margin
    cr = _plan([{"type": "text_present", "text": "Brightness-Contrast", "frame": 1}])
    _steps(cr, 1)
    again = [b for d, b in reads[1:]]
    assert again == [Box(0, 216, 148, 245)]  # not the line that reads nothing like it
    assert _score(cr) == [True]


def test_a_pattern_check_reads_again_the_shaky_lines_that_could_hold_its_plain_stretch():
    assert screencheck.could_hold("text_matches", {"pattern": "x"}, "anything")  # no plain stretch: any line
    assert screencheck.could_hold("text_matches", {"pattern": "ok|done"}, "anything")  # an alternation: any line
    rx = {"pattern": "[Bb]rightness"}
    assert screencheck.could_hold("text_matches", rx, "ry r-> © Brightness-Contrast...")
    assert screencheck.could_hold("text_matches", rx, "Brigthnes5 menu")  # a misread of it
    assert not screencheck.could_hold("text_matches", rx, "Tone Mapping >")  # was read again before
    assert screencheck.could_hold("text_present", {"text": "Brightness"}, "Brightnes5 menu")
    assert not screencheck.could_hold("text_present", {"text": "Brightness"}, "Tone Mapping")


def test_a_stage_is_matched_by_its_new_lines_and_the_goal_is_left_out():
    old, new = _line("Order confirmed"), _line("nothing here", 0.5)
    chk = {"type": "text_present", "text": "Order confirmed"}
    assert screencheck.found("text_present", chk, (old, new))
    assert not screencheck.found("text_present", chk, (old, new), new_from=1)  # matched at the earlier stage
    assert screencheck.found("text_present", chk, (_line("Order"), _line("confirmed")), new_from=2)  # wrapped
    assert not screencheck.found("text_present", chk, (_line("Order confirmed", 0.5),))  # shaky: decides nothing
    goal = "Open the shop, check out, and see that the order confirmed page shows"
    assert not screencheck.found("text_present", {"type": "text_present", "text": "order confirmed"},
                                 (_line("see that the order confirmed page shows"),), goal)


def test_a_real_desktop_screen_is_not_dimmed_and_a_dimmed_page_is():
    for path in (GIMP_DIALOG, VSCODE):  # GIMP's mid-grey panels beside its light dialog, with light text on them
        f = frames.decode(path)
        assert ocr.dimmed_region(f.luma, Box(0, 0, f.width, f.height), 1.0) is None
    f = frames.decode(CONSENT)
    region = ocr.dimmed_region(f.luma, Box(0, 0, f.width, f.height), 1.0)
    assert region is not None and region.top > 0 and region.width == f.width  # below the header, page-wide


def test_a_page_not_dimmed_is_not_read_again_evened(reads, monkeypatch):
    monkeypatch.setattr(ocr, "read_evened", lambda *a: pytest.fail("read evened"))
    f = frames.decode(GIMP_DIALOG)
    cr = _plan([{"type": "text_present", "text": "Levels", "frame": 1}])
    SHOWS[b"\x01"] = (_line("Brightness-Contrast"),)
    cr.read_step(_run(1), 0, (f, f), (b"\x00", b"\x01"))
    assert _score(cr) == [False]


def test_the_plain_stretch_every_match_of_a_pattern_holds():
    from trajcheck.analyzers.patterns import required_literal as lit

    assert lit("[Bb]rightness") == "rightness"
    assert lit("Order [A-Z]{2}-\\d+ confirmed") == "confirmed"
    assert lit("colou?r scheme") == "r scheme"  # the letter a quantifier makes optional is left out
    assert lit("x{1,3}hello") == "hello"  # not the repeat's counts
    assert lit("x(abc)?defg") == "defg"  # not a group's letters (the group may be optional)
    assert lit("(?i)hello world") == "hello world"
    assert lit("ready|done") is None and lit("(?x) abc def") is None and lit("\\d+ ok") is None


def test_a_pattern_check_rereads_only_the_lines_like_its_plain_stretch(reads):
    like, other = Box(8, 224, 140, 237), Box(600, 400, 900, 420)
    SHOWS[b"\x01"] = (_line("Brightnes-Contrast...", 0.55, like), _line("Tone Mapping >", 0.4, other))
    REREAD.add((b"\x01", Box(0, 216, 148, 245)))
    cr = _plan([{"type": "text_matches", "pattern": "[Bb]rightness", "frame": 1}])
    _steps(cr, 1)
    assert [b for d, b in reads[1:]] == [Box(0, 216, 148, 245)]  # "Tone Mapping" is not read again
    assert _score(cr) == [True]


def test_a_new_screens_region_takes_its_lines_from_the_frames_whole_read(reads, monkeypatch):
    """The referee's read of a change that is a new screen (read at the frame's own resolution, as a whole frame
    is) takes its lines from the whole read a contract's check made of that frame, rather than reading it again;
    without one, the region is read."""
    import numpy as np

    from trajcheck.media import screenread

    f = frames.decode(VSCODE)
    full, region = Box(0, 0, f.width, f.height), Box(21, 60, f.width, f.height)
    SHOWS[b"\x01"] = (_line("menu", 0.9, Box(0, 0, 40, 20)), _line("Saved", 0.95, Box(100, 300, 200, 320)))
    reader = ScreenReader(ocr.OcrEngine(None, "fake"))
    monkeypatch.setattr(screenread, "regions", lambda change, scale: [(region, True)])
    change = SimpleNamespace(size_changed=False, cells=np.zeros((0, 0), bool))
    got = screenread.read_change(reader, f, f, (b"\x00", b"\x01"), change, 1.0)
    assert reads == [(b"\x01", region)]  # no whole read made: the region is read
    reads.clear()
    reader.read(f, b"\x01", full, ocr.TEXT_SCALE)
    got = screenread.read_change(reader, f, f, (b"\x00", b"\x01"), change, 1.0)
    assert reads == [(b"\x01", full)]  # only the whole read: the region is not read again
    assert [x.text for x in got[0].after] == ["Saved"] and got[0].whole  # the line outside the region left out


def test_fallback_passes_wait_for_the_later_frames_page_reads(reads, monkeypatch):
    """A check on any frame that a later frame's page read decides has no earlier frame read again (islands,
    shaky lines, faint words); one that no frame decides has every frame's passes run, in frame order, and the
    waiting frames held in memory are bounded."""
    looked: list[bytes | None] = []
    monkeypatch.setattr(ocr, "islands", lambda luma, box, scale: looked.append(box) or [])
    SHOWS[b"\x03"] = (_line("Order confirmed"),)
    cr = _plan([{"type": "text_present", "text": "Order confirmed", "frame": "any"}])
    _steps(cr, 3)
    ev = cr.evidence()
    assert looked == [] and _score(cr) == [True]  # before: the islands of frames 0, 1 and 2 were read
    assert [v.frame for v in ev[1].views][-1] == "after step 3"
    cr = _plan([{"type": "text_present", "text": "Order placed", "frame": "any"}])
    _steps(cr, 3)
    assert looked == []
    cr.evidence()
    assert len(looked) == 4 and _score(cr) == [False]  # undecided after its page reads: every frame's passes
    looked.clear()
    cr = _plan([{"type": "text_present", "text": "Order placed", "frame": "any"}])
    n, run = contractread.MAX_WAITING + 2, _run(contractread.MAX_WAITING + 2)
    shots = [frames.decode(VSCODE) for _ in range(n + 1)]  # each frame held in memory apart
    for i in range(n):
        cr.read_step(run, i, (shots[i], shots[i + 1]), (bytes([i]), bytes([i + 1])))
    assert len({id(w[3]) for w in cr.waiting}) == contractread.MAX_WAITING  # the first frames' passes ran
    assert len(looked) == n + 1 - contractread.MAX_WAITING
