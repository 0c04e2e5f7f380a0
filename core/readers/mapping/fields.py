"""A mapping file's fields: where a value is in a step (or a log, or a results record), and how it is cut out.

A field is a JMESPath expression (``"action.point[0]"``), or a table that says more::

    text = { path = "Action", regex = 'type \\((?P<text>.*)\\)' }      # a regex cut of the string
    calls = { path = "@", regex = '(?s)<action>(.*)</action>', parse = "python", then = "[0].input" }
    screenshot_file = "{key}.jpg"                                    # templates: see :func:`fill`

``path`` (JMESPath, default ``@``) finds the value; ``regex`` searches it (a string, or the JSON text of
another value) and keeps the named group of the field's name, else ``group``, else the first group, else
the whole match; ``parse`` reads a string that embeds data (``json``, ``python``: a Python literal through
:func:`ast.literal_eval`, never evaluated; ``auto``: either); ``then`` is a JMESPath expression on the parsed
value; ``value`` is a template filled from the step's place instead of ``path``; ``for`` lists the action
types the field applies to (no warning on a run without them).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from ...analyzers import patterns
from ...base.errors import UsageError
from ..kit.screenshots import MAX_FRAME_BYTES

#: Longest string a regex or a parse is applied to: a field bigger than this is cut (a bounded read).
MAX_FIELD_CHARS = 1024 * 1024
#: ... but a screenshot field's regex sees as much as one inline frame at the frame size limit (its base64 text in
#: a block of a text log), so that no screenshot is cut; the regex's time limit bounds the search.
SHOT_FIELD_CHARS = MAX_FRAME_BYTES * 4 // 3 + 1024 * 1024
_TEMPLATE = re.compile(r"\{([A-Za-z_]\w*)([+-]\d+)?(?::(0?\d{0,2}d?))?\}")
_PARSES = ("json", "python", "auto")


def _jmes(text: str, where: str) -> Any:
    import jmespath

    try:
        return jmespath.compile(text)
    except jmespath.exceptions.JMESPathError as exc:
        raise UsageError(f"{where} = {text!r} is not JMESPath ({exc})") from None


class Field:
    """One field of a mapping, compiled: ``where`` names it in messages (``--mapping m.toml: step.text``)."""

    def __init__(self, name: str, spec: Any, where: str):
        self.name, self.where = name, where
        self.only: tuple[str, ...] = ()
        self.regex: Any = None  # compiled by the regex library: searched under a time limit
        self.limit = SHOT_FIELD_CHARS if name.startswith("screenshot") else MAX_FIELD_CHARS
        self.timeouts = 0  # values on which the regex ran past its time limit (they gave nothing)
        self.group: str | None = None
        self.parse: str | None = None
        self.then: Any = None
        self.template: str | None = None
        if isinstance(spec, str):
            self.path = _jmes(spec, where)
            return
        if not isinstance(spec, dict):
            raise UsageError(f"{where} must be a JMESPath string or a table {{ path, regex, parse, then }}")
        unknown = set(spec) - {"path", "regex", "group", "parse", "then", "value", "for"}
        if unknown:
            raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (path, regex, group, parse, "
                             "then, value, for)")
        self.path = _jmes(str(spec.get("path", "@")), where + ".path")
        self.template = str(spec["value"]) if "value" in spec else None
        if "regex" in spec:
            try:
                self.regex = patterns.compiled(str(spec["regex"]))
            except patterns.PatternError as exc:
                raise UsageError(f"{where}.regex = {spec['regex']!r} is not a regular expression ({exc})") from None
        self.group = str(spec["group"]) if "group" in spec else None
        if "parse" in spec:
            if spec["parse"] not in _PARSES:
                raise UsageError(f"{where}.parse = {spec['parse']!r}: one of {', '.join(_PARSES)}")
            self.parse = str(spec["parse"])
        if "then" in spec:
            self.then = _jmes(str(spec["then"]), where + ".then")
        only = spec.get("for", [])
        self.only = tuple(str(t) for t in (only if isinstance(only, list) else [only]))

    def value(self, v: Any, ctx: dict[str, Any] | None = None) -> Any:
        """The field's value on ``v`` (``ctx``: the step's place, for a template); None where it matches
        nothing or the expression fails on this value."""
        import jmespath

        try:
            got = fill(self.template, ctx or {}) if self.template is not None else self.path.search(v)
            if got is not None and self.regex is not None:
                got = self._cut(got)
                got = got.strip() if isinstance(got, str) else got
            if got is not None and self.parse is not None:
                got = parse_embedded(got, self.parse)
            if got is not None and self.then is not None:
                got = self.then.search(got)
        except (jmespath.exceptions.JMESPathError, TypeError, ValueError):
            return None
        return got

    def _cut(self, got: Any) -> Any:
        assert self.regex is not None
        text = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False, default=str)
        try:  # a step's block of a text log is long: a pattern that backtracks is stopped, not waited for
            m = patterns.search(self.regex.pattern, text[:self.limit])
        except patterns.PatternTimeout:
            self.timeouts += 1
            return None
        if m is None:
            return None
        groups = m.groupdict()
        for g in (self.group, self.name):
            if g and g in groups:
                return groups[g]
        if self.group and self.group.isdigit() and int(self.group) <= (self.regex.groups or 0):
            return m.group(int(self.group))
        named = [v for v in groups.values() if v is not None]
        if named:
            return named[0]
        return m.group(1) if self.regex.groups else m.group(0)


def parse_embedded(v: Any, how: str) -> Any:
    """A string that holds JSON or a Python literal, as data (never evaluated: :func:`ast.literal_eval`); a
    value that is not a string is returned as is; None when it does not parse."""
    if not isinstance(v, str):
        return v
    text = v.strip()[:MAX_FIELD_CHARS]
    if how in ("json", "auto"):
        try:
            return json.loads(text)
        except ValueError:
            if how == "json":
                return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def fill(template: str, ctx: dict[str, Any]) -> str | None:
    """``template`` with each ``{name}``, ``{name+1}`` (an offset) and ``{name:03}`` (zero padding) replaced
    by the value of ``name`` in ``ctx``; None when a name has no value there or is not a number where an
    offset or padding asks for one."""
    missing = False

    def one(m: re.Match[str]) -> str:
        nonlocal missing
        name, offset, spec = m.group(1), m.group(2), m.group(3)
        v = ctx.get(name)
        if v is None:
            missing = True
            return ""
        if offset or spec:
            try:
                n = int(str(v).strip()) + int(offset or 0)
            except ValueError:
                missing = True
                return ""
            return format(n, spec + ("" if not spec or spec.endswith("d") else "d")) if spec else str(n)
        return str(v)

    out = _TEMPLATE.sub(one, template)
    return None if missing else out


def compile_fields(section: dict[str, Any], names: tuple[str, ...], prefix: str, where: str) -> dict[str, Field]:
    """The fields of a TOML table that are among ``names``, compiled, keyed ``prefix + name``."""
    return {prefix + f: Field(f, section[f], f"{where}: {prefix}{f}") for f in names
            if isinstance(section.get(f), (str, dict))}
