"""How deep and how large a DOM snapshot is, found in one linear pass before it is parsed.

Every HTML5 tree builder, lexbor included, checks "is there a <p> in button scope" for each block start
tag by walking the stack of open elements from the top: on N nested ``<div>`` that is N * N / 2 steps
(measured with selectolax 1.0: 20,000 levels 0.32 s, 40,000 1.4 s, 80,000 5.9 s, and a 32 MiB snapshot
of nested divs would take hours). Browsers bound it by capping the depth their parser builds: Chromium
nests at most 512 elements (``kMaximumHTMLParserDOMTreeDepth``), so a snapshot saved from a page a browser
parsed is never deeper. trajcheck refuses snapshots deeper than :data:`MAX_DOM_DEPTH` (the same 512)
before lexbor sees them; then parsing costs at most 512 steps per tag (1.6 s for the worst 32 MiB file).

Memory is bounded the same way: lexbor keeps about 600 bytes per element (measured: 370,000 elements
took 220 MB) and the skeleton up to 500 more per interactive element, so snapshots with more than
:data:`MAX_DOM_ELEMENTS` elements are refused too. Real pages are far below both limits (a few thousand
elements, depth under 50).

The scan emulates the parts of the HTML tree builder that decide the depth, with every element
category as a stack of positions, so each tag costs O(1) (amortised): raw text (script, style, ...)
and comments are skipped, void elements and self-closing foreign elements (SVG, MathML) are not
pushed, and an end tag pops only where the parser surely pops (a block end tag down to its element
in scope; any other down to its element with no special element above it); formatting elements
(b, i, a, ...) popped by another tag still count, as the parser reopens them. So the depth found is
never less than what the parser builds for HTML content, and is exact for snapshots a browser
serialized (every element closed). The scan stops as soon as a limit is passed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Deepest element nesting parsed (Chromium's HTML parser nests at most 512 elements).
MAX_DOM_DEPTH = 512
#: Most elements parsed in one snapshot (memory: ~600 bytes an element in lexbor).
MAX_DOM_ELEMENTS = 100_000

#: A tag up to its ``>`` (end tag: group 1 is "/"; name: group 2), the start of a comment (group 3), or
#: a ``<!...>`` or ``<?...>`` declaration.
_TAG = re.compile(r"<(?:(/?)([A-Za-z][^\s/>]*)[^>]*>|(!--)|[!?][^>]*>)")
VOID = frozenset("area base basefont bgsound br col embed frame hr image img input keygen link meta param source "
                 "track wbr".split())
RAW_TEXT = frozenset("script style textarea title xmp iframe noembed noframes noscript plaintext".split())
_RAW_END = {n: re.compile(f"</{n}", re.I) for n in RAW_TEXT}
#: Elements that end "in scope" searches (the spec's default scope; foreign integration points too).
SCOPE = frozenset("applet caption html table td th marquee object template mi mo mn ms mtext annotation-xml "
                  "foreignobject desc".split())
SPECIAL = frozenset(("address applet area article aside base basefont bgsound blockquote body br button caption "
                     "center col colgroup dd details dir div dl dt embed fieldset figcaption figure footer form frame "
                     "frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html iframe img input keygen li link listing "
                     "main marquee menu meta nav noembed noframes noscript object ol p param plaintext pre script "
                     "search section select source style summary table tbody td template textarea tfoot th thead "
                     "title tr track ul wbr xmp").split())
#: Start tags that close an open <p> in button scope.
CLOSES_P = frozenset(("address article aside blockquote center details dialog dir div dl fieldset figcaption "
                      "figure footer header hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 h6 "
                      "pre listing form hr xmp").split())
#: End tags the scan never pops for (the parser treats them specially: </body>, </html>, </br>, </form>).
_NO_POP = frozenset(("body", "html", "br", "form", "head"))
_HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
#: Start tags that close or open other elements first (_close_implied); any other start tag just nests.
_IMPLIES = CLOSES_P | {"li", "dd", "dt", "option", "optgroup", "button", "td", "th", "tr"}
#: Formatting elements: popped by anything but their own end tag they stay "active", and the parser
#: pushes them again (clones) before the next text or phrasing tag, so they still count.
FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())

# category -> the element names in it; the scan keeps, per category, the stack positions of its elements
_CATS = {
    "scope": SCOPE,
    "button": SCOPE | {"button"},
    "list": SCOPE | {"ol", "ul"},
    "table": frozenset({"html", "table", "template"}),
    "special": SPECIAL,
    "li_stop": SPECIAL - {"address", "div", "p"},
    "foreign": frozenset({"svg", "math"}),
    "integration": frozenset({"foreignobject", "desc", "mi", "mo", "mn", "ms", "mtext", "annotation-xml"}),
}
#: HTML start tags that break out of SVG and MathML content (then ``/>`` means nothing and they nest).
BREAKOUT = frozenset(("b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img "
                      "li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var "
                      "font").split())


@dataclass(frozen=True)
class DomShape:
    elements: int  # start tags of elements (stops counting past the limit)
    depth: int  # deepest nesting reached (stops past the limit)

    @property
    def too_deep(self) -> bool:
        return self.depth > MAX_DOM_DEPTH

    @property
    def too_many(self) -> bool:
        return self.elements > MAX_DOM_ELEMENTS


class _Stack:
    """The stack of open elements, by name, with each category's positions kept alongside."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.active: dict[str, int] = {}  # formatting elements popped by another tag: the parser may reopen them
        self.n_active = 0
        self.at: dict[str, list[int]] = {}
        self.cats: dict[str, list[int]] = {c: [] for c in _CATS}
        self.cats_of: dict[str, tuple[str, ...]] = {}

    def push(self, name: str) -> None:
        i = len(self.names)
        self.names.append(name)
        self.at.setdefault(name, []).append(i)
        cats = self.cats_of.get(name)
        if cats is None:
            cats = self.cats_of[name] = tuple(c for c, members in _CATS.items() if name in members)
        for c in cats:
            self.cats[c].append(i)

    def pop_to(self, i: int, closed: str | None = None) -> None:
        """Pop the element at position ``i`` and everything above it (``closed``: the end tag that pops it,
        which ends that element for good; other formatting elements popped stay active)."""
        names, at, cats, cats_of = self.names, self.at, self.cats, self.cats_of
        while len(names) > i:
            name = names.pop()
            at[name].pop()
            for c in cats_of[name]:
                cats[c].pop()
            if name in FORMATTING and not (len(names) == i and name == closed):
                self.active[name] = self.active.get(name, 0) + 1
                self.n_active += 1

    def end_formatting(self, name: str) -> None:
        """An end tag of a formatting element not open: it removes one active entry of that name."""
        if self.active.get(name):
            self.active[name] -= 1
            self.n_active -= 1

    @property
    def depth(self) -> int:
        return len(self.names) + self.n_active

    def nearest(self, name: str, above: str) -> int:
        """Position of the topmost ``name`` with no element of category ``above`` over it, else -1."""
        pos = self.at.get(name)
        if not pos:
            return -1
        fence = self.cats[above]
        return pos[-1] if not fence or fence[-1] <= pos[-1] else -1

    def top_of(self, cat: str) -> int:
        c = self.cats[cat]
        return c[-1] if c else -1


def check(html: str) -> DomShape:
    """:func:`dom_shape` against the limits; a snapshot with fewer tags than MAX_DOM_DEPTH cannot pass a
    limit and is not scanned (its shape is then given as upper bounds: every tag an element, nested)."""
    tags = html.count("<")
    if tags + 2 <= MAX_DOM_DEPTH:
        return DomShape(tags, tags + 2)
    return dom_shape(html)


def _end_tag(st: _Stack, name: str) -> None:
    """Pop the elements an end tag closes, as the parser's end-tag rules do."""
    if name in SPECIAL:
        i = st.nearest(name, "list" if name == "li" else "button" if name == "p" else "scope")
    else:  # "any other end tag": its element, with no special element above it
        i = st.nearest(name, "special")
    if i >= 0:
        st.pop_to(i, name)
    elif name in FORMATTING:
        st.end_formatting(name)


def _close_implied(st: _Stack, name: str) -> None:
    """Before a start tag ``name`` (outside foreign content): close what it implicitly ends (an open
    ``<p>``, a sibling ``<li>``, a table cell) and open what it implies (``<tbody>``, ``<tr>``)."""
    if name in CLOSES_P:
        i = st.nearest("p", "button")
        if i >= 0:
            st.pop_to(i)
        if name in _HEADINGS and st.names and st.names[-1] in _HEADINGS:
            st.pop_to(len(st.names) - 1)
    elif name in ("li", "dd", "dt"):
        for same in (("li",) if name == "li" else ("dd", "dt")):
            i = st.nearest(same, "li_stop")
            if i >= 0:
                st.pop_to(i)
    elif name in ("option", "optgroup") and st.names and st.names[-1] == "option":
        st.pop_to(len(st.names) - 1)
    elif name == "button":
        i = st.nearest("button", "scope")
        if i >= 0:
            st.pop_to(i)
    elif name in ("td", "th", "tr"):
        t = st.top_of("table")
        cell = max(st.at["td"][-1] if st.at.get("td") else -1, st.at["th"][-1] if st.at.get("th") else -1)
        if cell > t:
            st.pop_to(cell)
        if name == "tr":
            row = st.at["tr"][-1] if st.at.get("tr") else -1
            if row > st.top_of("table"):
                st.pop_to(row)
        if st.names and st.names[-1] == "table":
            st.push("tbody")  # implied by the parser
        if name in ("td", "th") and st.names and st.names[-1] in ("table", "tbody", "thead", "tfoot"):
            st.push("tr")


def dom_shape(html: str, max_elements: int = MAX_DOM_ELEMENTS, max_depth: int = MAX_DOM_DEPTH) -> DomShape:
    """Elements and nesting depth of ``html`` as an HTML5 parser builds them (see the module doc),
    stopping as soon as one passes its limit. Linear in the size of ``html``."""
    st = _Stack()
    st.push("html")  # what the parser implies when the snapshot does not say it (then the tags merge)
    st.push("body")
    names, at, cats, cats_of = st.names, st.at, st.cats, st.cats_of
    foreign_at, integration_at = cats["foreign"], cats["integration"]
    elements, depth = 0, 2
    # Tags are matched whole, up to their ``>``, by one search over the text, started again after each
    # comment and raw-text element (on 68 real WebArena/WorkArena pages of 190 KB on average, 1.7 ms a
    # page against 3.0 ms for a search and a find a tag, and the usual end tag pops in place). The search
    # ends at the last ``>``: a tag after it has none, which ends the scan, and a tag that looked for its
    # ``>`` up to the end of the text, at each ``<``, would make the scan quadratic.
    end = html.rfind(">") + 1
    start: int | None = 0
    while start is not None:
        tags, start = _TAG.finditer(html, start, end), None
        for m in tags:
            slash, name, comment = m.groups()
            if comment:  # <!-- comment -->
                close = html.find("-->", m.end())
                start = None if close < 0 else close + 3
                break
            if name is None:  # <!DOCTYPE ...>, <?...>
                continue
            name = name.lower()
            if slash:  # an end tag
                if name in _NO_POP:
                    continue
                if names[-1] == name:  # it ends the current element (as _end_tag would, in fewer steps)
                    names.pop()
                    at[name].pop()
                    for c in cats_of[name]:
                        cats[c].pop()
                else:
                    _end_tag(st, name)
                continue
            elements += 1
            if elements > max_elements:
                break
            foreign = (bool(foreign_at) and foreign_at[-1] > (integration_at[-1] if integration_at else -1)
                       and name not in BREAKOUT)
            if name in VOID and not foreign:
                continue
            if html[m.end() - 2] == "/" and (foreign or name in ("svg", "math")):  # self-closing, foreign
                continue
            if name in ("html", "head", "body"):
                continue  # merged into the implied ones; <head>'s children are void or raw text
            if not foreign and name in _IMPLIES:
                _close_implied(st, name)
            if (name_cats := cats_of.get(name)) is None:
                st.push(name)  # the first of its name: the stack learns its categories
            else:  # st.push(name), in fewer steps
                i = len(names)
                names.append(name)
                at[name].append(i)
                for c in name_cats:
                    cats[c].append(i)
            if len(names) + st.n_active > depth:
                depth = len(names) + st.n_active
                if depth > max_depth:
                    break
            if name in RAW_TEXT and not foreign:  # its text is not markup: skip to its end tag
                raw_end = _RAW_END[name].search(html, m.end())
                start = None if raw_end is None else raw_end.start()
                break
    return DomShape(elements, depth)
