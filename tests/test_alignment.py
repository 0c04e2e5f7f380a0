"""The alignment of two runs' steps (analyzers/alignment.py, and the step signatures of trajcheck.queries.pairdiff): an
extra step leaves the later pairs in place, each kind of divergence is told apart, points are compared as
shares of each run's screen."""

from __future__ import annotations

from typing import Any

from trajcheck.analyzers.alignment import Screen, StepSig, align, explain, first_divergence
from trajcheck.queries.pairdiff import align_runs, signature

#: Four screens, pHashes far apart (more than 8 bits), and one 3 bits from the first (the same screen).
S0, S1, S2, S3 = 0, 0xFFFF, 0xFFFF_0000, 0xFFFF_0000_0000
S0_NOISY = 0b111


def sig(index: int, kind: str, before: int | None, after: int | None = None, target: str | None = None,
        point: tuple[float, float] | None = None, page: str | None = None) -> StepSig:
    after = before if after is None else after
    return StepSig(index, kind, target, point, Screen(before, page), Screen(after, page),
                   kind if point is None else f"{kind} {point}")


def shape(pairs: list[Any]) -> list[tuple[str, int | None, int | None]]:
    return [(str(p.match), p.a and p.a.index, p.b and p.b.index) for p in pairs]


def test_an_extra_step_does_not_shift_the_later_pairs():
    # B clicks once more on S1 (a click that did nothing), then goes on as A did
    a = [sig(1, "CLICK", S0, S1, point=(0.1, 0.1)), sig(2, "CLICK", S1, S2, point=(0.5, 0.5)),
         sig(3, "TYPE", S2, S3, target="text:hi"), sig(4, "DONE", S3)]
    b = [sig(1, "CLICK", S0, S1, point=(0.1, 0.1)), sig(2, "CLICK", S1, S1, point=(0.9, 0.9)),
         sig(3, "CLICK", S1, S2, point=(0.5, 0.5)), sig(4, "TYPE", S2, S3, target="text:hi"), sig(5, "DONE", S3)]
    pairs = align(a, b)
    assert shape(pairs) == [("same", 1, 1), ("extra_step", None, 2), ("same", 2, 3), ("same", 3, 4),
                            ("same", 4, 5)]
    assert first_divergence(pairs) == 1
    assert explain(pairs[1]) == "B took step 2 (CLICK (0.9, 0.9)), which A has no counterpart of"


def test_each_kind_of_divergence():
    click = dict(point=(0.5, 0.5))
    cases = {
        "different_screen": (sig(1, "CLICK", S0, **click), sig(1, "CLICK", S1, **click)),
        "different_action": (sig(1, "CLICK", S0, **click), sig(1, "DONE", S0)),
        "different_target": (sig(1, "CLICK", S0, **click), sig(1, "CLICK", S0, point=(0.6, 0.5))),
        "different_result": (sig(1, "CLICK", S0, S1, **click), sig(1, "CLICK", S0, S2, **click)),
        "same": (sig(1, "CLICK", S0, S1, **click), sig(1, "CLICK", S0_NOISY, S1, **click)),
    }
    for want, (x, y) in cases.items():
        [pair] = align([x], [y])
        assert str(pair.match) == want, (want, pair)
    # a page that differs tells screens apart whatever their pHashes
    [pair] = align([sig(1, "CLICK", S0, page="a.test/form", **click)], [sig(1, "CLICK", S0, page="a.test/done",
                                                                             **click)])
    assert str(pair.match) == "different_screen" and pair.before.distance == 0
    assert explain(pair).endswith("(pages a.test/form and a.test/done): A CLICK (0.5, 0.5); B CLICK (0.5, 0.5)")
    # a missing frame is no difference: the actions decide
    [pair] = align([sig(1, "CLICK", None, **click)], [sig(1, "CLICK", S3, **click)])
    assert str(pair.match) == "same" and pair.before.word == "unknown"


def test_a_run_that_stops_early_ends_on_its_gaps():
    a = [sig(1, "CLICK", S0, point=(0.5, 0.5)), sig(2, "DONE", S0)]
    b = [sig(1, "CLICK", S0, point=(0.5, 0.5)), sig(2, "CLICK", S0, S1, point=(0.2, 0.8)),
         sig(3, "CLICK", S1, S2, point=(0.5, 0.5)), sig(4, "DONE", S2)]
    assert shape(align(a, b)) == [("same", 1, 1), ("different_action", 2, 2), ("run_ended", None, 3),
                                  ("run_ended", None, 4)]
    assert shape(align(b, [])) == [("run_ended", 1, None), ("run_ended", 2, None), ("run_ended", 3, None),
                                   ("run_ended", 4, None)]
    assert align([], []) == [] and first_divergence([]) is None


def _step(i: int, kind: str, x: float | None = None, y: float | None = None, **kw: Any) -> dict[str, Any]:
    row = {"step_index": i, "action_type": kind, "action_x": x, "action_y": y, "action_keys": None,
           "action_text": None, "action_url": None, "action_extra": None, "frame_pre_phash": "0000000000000000",
           "frame_post_phash": "0000000000000000", "frame_width": None, "frame_height": None, "url_before": None,
           "url_after": None}
    row.update(kw)
    return row


def test_points_are_shares_of_each_runs_screen():
    small, large = {"screen_width": 1280, "screen_height": 800}, {"screen_width": 2560, "screen_height": 1600}
    # the same button on a screen twice as large: the same target
    pairs, first = align_runs(small, [_step(1, "CLICK", 640, 400)], large, [_step(1, "CLICK", 1280, 800)])
    assert first is None
    # 20 px off at 1280 wide is within 2.5% of the width; 60 px is not
    assert align_runs(small, [_step(1, "CLICK", 640, 400)], small, [_step(1, "CLICK", 660, 400)])[1] is None
    pairs, first = align_runs(small, [_step(1, "CLICK", 640, 400)], small, [_step(1, "CLICK", 700, 400)])
    assert first == 0 and str(pairs[0].match) == "different_target"
    # without a screen size, the frame's
    sa = signature(_step(1, "CLICK", 320, 200, frame_width=640, frame_height=400), (None, None))
    assert sa.point == (0.5, 0.5)


def test_targets_keys_text_urls_and_scrolls():
    def same(x: dict[str, Any], y: dict[str, Any]) -> bool:
        return align_runs({}, [x], {}, [y])[1] is None

    assert same(_step(1, "KEY_PRESS", action_keys="Ctrl+A"), _step(1, "KEY_PRESS", action_keys="ctrl + a"))
    assert not same(_step(1, "TYPE", action_text="jane@example"), _step(1, "TYPE", action_text="jane@example.com"))
    assert not same(_step(1, "SCROLL", 640, 400, action_extra='{"dy": 300}'),
                    _step(1, "SCROLL", 640, 400, action_extra='{"dy": -300}'))
    assert same(_step(1, "SCROLL", 640, 400, action_extra='{"direction": "down"}'),
                _step(1, "SCROLL", 640, 400, action_extra='{"dy": 120}'))
    # the page is the URL's path: a query (a session id) or another instance of the site does not make
    # another screen; another path does
    assert same(_step(1, "DONE", url_before="http://a.test/x?sid=1"),
                _step(1, "DONE", url_before="http://localhost:8002/x?sid=2"))
    assert not same(_step(1, "DONE", url_before="http://a.test/x"), _step(1, "DONE", url_before="http://a.test/y"))
