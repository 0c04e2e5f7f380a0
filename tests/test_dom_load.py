"""Loading DOM snapshots cheaply, with the results of the plain way: a page recorded twice is parsed once,
the pre-scan reads each tag once, and the skeleton and page text skip work that changes nothing."""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from selectolax.lexbor import LexborHTMLParser

from trajcheck.analyzers import messages, skeleton as sk
from trajcheck.media.dom import DomCache, Snapshot
from trajcheck.media.domscan import (_NO_POP, _RAW_END, BREAKOUT, RAW_TEXT, VOID, DomShape, _close_implied, _end_tag,
                                     _Stack, dom_shape)

from conftest import SAMPLES

STEP: Any = SimpleNamespace(source="steps.jsonl", line=1)


def _fresh(html: str) -> tuple[Any, ...]:
    """What a snapshot loaded on its own holds, tree included (as html)."""
    tree = LexborHTMLParser(html)
    skel = sk.extract(tree)
    text = sk.page_text(tree)
    return sk.dom_hash(html), skel, text, messages.page_messages(tree, text.text), tree.html


def _fields(snap: Snapshot | None) -> tuple[Any, ...]:
    assert snap is not None and snap.tree is not None
    return snap.hash, snap.skeleton, snap.text, snap.messages, snap.tree.html


def test_a_page_recorded_again_is_parsed_once_and_loads_the_same(tmp_path: Path, monkeypatch: Any) -> None:
    pages = sorted(SAMPLES.glob("*/dom/*.html"))[:3]
    names = "abaacc"
    for i, name in enumerate(names):
        (tmp_path / f"{i}.html").write_bytes(pages["abc".index(name)].read_bytes())
    parsed: list[str] = []
    parse = sk.parse
    monkeypatch.setattr(sk, "parse", lambda html: parsed.append(html) or parse(html))
    doms = DomCache(SimpleNamespace(run_id="r"), tmp_path, Counter({f"{i}.html": 1 for i in range(len(names))}))
    snaps, trees = [], []
    for i, name in enumerate(names):
        snaps.append(snap := doms.get(f"{i}.html", STEP, "page.dom_after"))
        assert _fields(snap) == _fresh(pages["abc".index(name)].read_text())
        trees.append(snap.tree if snap else None)
        if i < 3:
            doms.release(f"{i}.html")
    assert len(parsed) == 4 and not doms.problems  # a, b, a again (the spare tree was b's by then), c
    assert snaps[2] is not None and snaps[0] is not None and snaps[2].skeleton is snaps[0].skeleton
    assert trees[3] is trees[2]  # dropped just before: the spare tree
    assert trees[5] is trees[4]  # alive: shared


def test_a_refused_snapshot_is_refused_again_when_repeated(tmp_path: Path) -> None:
    deep = "<div>" * 600
    for i in range(2):
        (tmp_path / f"{i}.html").write_text(deep)
    doms = DomCache(SimpleNamespace(run_id="r"), tmp_path, Counter())
    assert doms.get("0.html", STEP, "f") is None and doms.get("1.html", STEP, "f") is None
    assert [p.slug for p in doms.problems] == ["dom_too_deep", "dom_too_deep"]


def _keys_as_before(ids: list[str]) -> list[str]:
    """The skeleton keys of links with these ids, counted as extract counted them before (anew each time)."""
    sk_: dict[str, None] = {}
    for key in ids:
        if key in sk_:
            key = f"{key}~{sum(1 for k in sk_ if k.split('~')[0] == key)}"
        sk_[key] = None
    return list(sk_)


@pytest.mark.slow
def test_skeleton_keys_of_repeated_ids_are_counted_as_before_in_linear_time() -> None:
    rng = random.Random(1)
    for _ in range(300):
        ids = [rng.choice(["a", "a~1", "a~2", "a~1~0", "~", "a~", "b", "b~0"]) for _ in range(rng.randint(1, 30))]
        html = "".join(f'<a id="{i}">x</a>' for i in ids)
        assert list(sk.extract(sk.parse(html))) == _keys_as_before(ids), ids
    tree = sk.parse('<a id="x">x</a>' * 20_000)
    start = time.perf_counter()
    keys = sk.extract(tree)
    assert len(keys) == 20_000 and time.perf_counter() - start < 2  # counted anew each time: 17 s


@pytest.mark.slow
def test_text_collapsed_by_prefix_equals_the_whole_collapsed() -> None:
    rng = random.Random(2)
    parts = ["a", "bb ", " ", "\n\t", "\u00a0", "é", "word " * 30, " " * 400]
    for _ in range(2000):
        t = "".join(rng.choice(parts) for _ in range(rng.randint(0, 80)))
        for limit in (None, 0, 1, 3, 50, 200):
            whole = re.sub(r"\s+", " ", t).strip()
            assert sk._collapse(t, limit) == (whole[:limit] if limit else whole), (t, limit)


def _scan_a_token_at_a_time(html: str, max_elements: int, max_depth: int) -> DomShape:
    """The pre-scan as first written: a search for each token, then a find for its ``>``."""
    token = re.compile(r"<(?:(/?)([A-Za-z][^\s/>]*)|(!--)|[!?])")
    st = _Stack()
    st.push("html")
    st.push("body")
    elements, depth, pos = 0, 2, 0
    while pos < len(html) and (m := token.search(html, pos)) is not None:
        if m.group(3):
            end = html.find("-->", m.end())
            pos = len(html) if end < 0 else end + 3
            continue
        if (gt := html.find(">", m.end())) < 0:
            break
        pos = gt + 1
        if m.group(2) is None:
            continue
        name = m.group(2).lower()
        if m.group(1):
            if name not in _NO_POP:
                _end_tag(st, name)
            continue
        elements += 1
        if elements > max_elements:
            break
        foreign = st.top_of("foreign") > st.top_of("integration") and name not in BREAKOUT
        if (name in VOID and not foreign) or (html[gt - 1] == "/" and (foreign or name in ("svg", "math"))) \
                or name in ("html", "head", "body"):
            continue
        if not foreign:
            _close_implied(st, name)
        st.push(name)
        if st.depth > depth:
            depth = st.depth
            if depth > max_depth:
                break
        if name in RAW_TEXT and not foreign:
            raw_end = _RAW_END[name].search(html, pos)
            pos = len(html) if raw_end is None else raw_end.start()
    return DomShape(elements, depth)


@pytest.mark.slow
def test_dom_scan_reads_tags_as_a_token_at_a_time_scan_does() -> None:
    rng = random.Random(3)
    tokens = ["<div>", "</div>", "<p>", "</p>", "<b>", "</b>", "<a title='>'>", "</a>", "<table>", "<tr>", "<td>",
              "</td>", "</tr>", "<li>", "</li>", "<ul>", "<dd>", "<option>", "<button>", "<h1>", "</h1>", "<svg>",
              "</svg>", "<foreignObject>", "<desc>", "<div/>", "<br/>", "<img>", "<script>", "</script>",
              "<style>", "</STYLE>", "<textarea>", "<!-- c -->", "<!--", "-->", "<!DOCTYPE html>", "<?x>", "<",
              ">", "</", "<x", "<a<b>", "<x</script>", "<html>", "</body>", "<form>", "</form>", "</br>", "<SPAN>",
              "<nobr>", "<font>", "<xmp>", "<caption>", "<math/>", "<p/ >", "</p >", "<td/>", "x", "\n"]
    pages = ["".join(rng.choice(tokens) for _ in range(rng.randint(0, 800))) for _ in range(1500)]
    pages += [p.read_text(errors="replace") for p in sorted(SAMPLES.glob("*/dom/*.html"))]
    for html in pages:
        for max_elements, max_depth in ((100_000, 512), (40, 12), (10**9, 10**9)):
            assert dom_shape(html, max_elements, max_depth) == _scan_a_token_at_a_time(html, max_elements, max_depth)


def test_dom_scan_is_linear_on_tags_without_an_end() -> None:
    for html in ("<a" * 300_000, "<a" * 300_000 + ">", "<!--" * 300_000, "<p>" + "<a " * 300_000):
        start = time.perf_counter()
        dom_shape(html)
        assert time.perf_counter() - start < 2, html[:20]


def test_page_text_is_the_same_read_whole_or_walked(monkeypatch: Any) -> None:
    pages = [p.read_text(errors="replace") for p in sorted(SAMPLES.glob("*/dom/*.html"))]
    pages.append("<body>" + "<div>\n   <p> a  b </p>\n</div>\n" * 3000 + "</body>")
    whole = [sk.page_text(LexborHTMLParser(html)) for html in pages]
    monkeypatch.setattr(sk, "WHOLE_TEXT_BYTES", 0)
    assert [sk.page_text(LexborHTMLParser(html)) for html in pages] == whole
