"""Issue 29: states, not transitions (analyzers/states.py): which screens a run reaches, which it goes back
to, its oscillations and where it stalls."""

from __future__ import annotations

from trajcheck.analyzers.states import FrameSig, StateOptions, changed_cells, same_screen, track
from trajcheck.base.hashing import Hash64

BASE = bytes([200] * 1024)


def sig(cells: dict[int, int] | None = None, bits: int = 0, page: str | None = None) -> FrameSig:
    """A screen: the base thumbnail with some cells set to other gray levels, a pHash ``bits`` away from 0."""
    raw = bytearray(BASE)
    for i, v in (cells or {}).items():
        raw[i] = v
    return FrameSig(Hash64((1 << bits) - 1), bytes(raw), page)


DESK = sig()
MENU = {name: sig({k: 40 for k in range(start, start + 12)}) for name, start in
        (("file", 0), ("help", 100), ("view", 200), ("edit", 300))}


def _frames(screens: list[FrameSig]) -> tuple[list[int], list[FrameSig], list[FrameSig]]:
    """Steps 1..n moving through ``screens`` (the post of one step is the pre of the next)."""
    return list(range(1, len(screens))), screens[:-1], screens[1:]


def test_a_few_changed_cells_are_the_same_screen_and_many_are_not():
    opts = StateOptions()
    assert changed_cells(BASE, sig({5: 40}).cells, opts.cell_delta) == 1
    assert same_screen(DESK, sig({5: 40}), opts)  # a caret, a hover
    assert not same_screen(DESK, MENU["file"], opts)  # a menu: many cells, pHash unmoved
    assert same_screen(DESK, sig({k: 200 + opts.cell_delta for k in range(50)}), opts)  # small drift everywhere
    assert not same_screen(DESK, sig(bits=opts.global_max + 1), opts)
    assert not same_screen(sig(page="https://a/?page=1"), sig(page="https://a/?page=2"), opts)


def test_menus_opened_and_closed_are_returns_an_oscillation_and_a_stall():
    """The issue's UI-TARS run: one click that leads somewhere, then each menu opened and closed."""
    start = sig({900: 10, 901: 10, 902: 10, 903: 10})  # before the first click
    screens = [start, DESK, MENU["file"], DESK, MENU["help"], DESK, MENU["view"], DESK, MENU["edit"], DESK, DESK]
    steps, run = track(*_frames(screens))
    kinds = [s.kind for s in steps]
    assert kinds == ["new", "new", "return", "new", "return", "new", "return", "new", "return", "same"]
    assert {s.first_step for s in steps if s.kind == "return"} == {1}  # each close goes back to step 1's screen
    assert all(s.oscillation == 1 for s in steps[1:9]) and steps[0].oscillation is None
    assert (run.states, run.returns, run.oscillations, run.stalled_from, run.final_first_step) == (6, 4, 1, 2, 1)
    assert run.returning == 0.4


def test_pages_that_look_alike_but_have_their_own_urls_are_progress():
    screens = [sig(page=f"https://shop/results?page={n}") for n in range(1, 7)]
    steps, run = track(*_frames(screens))
    assert [s.kind for s in steps] == ["new"] * 5
    assert (run.states, run.returns, run.oscillations, run.stalled_from) == (6, 0, 0, None)


def test_the_same_look_without_urls_is_one_state():
    steps, run = track(*_frames([DESK, sig({3: 0}), DESK]))
    assert [s.kind for s in steps] == ["same", "same"] and run.states == 1 and run.stalled_from is None


def test_type_clear_type_again_is_an_oscillation():
    typed = sig({k: 60 for k in range(40, 46)})
    steps, run = track(*_frames([DESK, typed, DESK, typed]))
    assert [s.kind for s in steps] == ["new", "return", "return"]
    assert [s.first_step for s in steps] == [None, 1, 1] and [s.first_before for s in steps] == [False, True, False]
    assert run.oscillations == 1 and run.stalled_from == 2  # it ends on the screen step 1 reached: 2 on is undone


def test_back_and_forth_between_two_results():
    a, b = sig(page="https://s/r/1"), sig(page="https://s/r/2")
    steps, run = track(*_frames([sig(page="https://s/q"), a, b, a, b, a]))
    assert [s.kind for s in steps] == ["new", "new", "return", "return", "return"]
    assert run.oscillations == 1 and [s.oscillation for s in steps] == [None, 1, 1, 1, 1]


def test_a_dialog_filled_then_closed_is_not_an_oscillation():
    """Open a dialog, fill it, close it: one return, no oscillation; the page after is the page before."""
    dialog = sig({k: 30 for k in range(500, 540)})
    filled = sig({**{k: 30 for k in range(500, 540)}, **{k: 90 for k in range(600, 606)}})
    steps, run = track(*_frames([DESK, dialog, filled, DESK]))
    assert [s.kind for s in steps] == ["new", "new", "return"] and run.oscillations == 0


def test_missing_frames_leave_steps_unplaced():
    steps, run = track([1, 2, 3], [DESK, None, None], [MENU["file"], None, DESK])
    assert [s.kind for s in steps] == ["new", None, "return"]
    assert run.returning == 0.5 and run.states == 2


def test_no_frames_at_all():
    steps, run = track([1, 2], [None, None], [None, None])
    assert [s.kind for s in steps] == [None, None]
    assert (run.states, run.returning, run.stalled_from) == (0, None, None)
