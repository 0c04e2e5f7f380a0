"""Loading the objects an entry point group names (``trajcheck.readers``, ``trajcheck.judgments``): the package's
own entry points skipped (its built-ins are loaded from the code, installed metadata or not), each other one
loaded, called when it is a function of no argument, checked for its type and its name, and every failure kept
as a note, never raised: a broken plugin costs its own objects, never the call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def load_group(group: str, kind: type[T], name_of: Callable[[T], str], taken: set[str], what: str
               ) -> tuple[list[T], list[tuple[str, str, str]]]:
    """The objects of ``group``'s entry points that are not trajcheck's own, of type ``kind`` (or returned by a
    function of no argument), whose names (``name_of``) are not in ``taken`` (the names loaded are added), by
    entry point name; and each failure as (entry point name, its value, what went wrong), the listing's own as
    (``group``, "", why). ``what``: one of them in words ("a reader"), for a name one has already."""
    from importlib.metadata import entry_points

    out: list[T] = []
    failed: list[tuple[str, str, str]] = []
    try:
        points = sorted(entry_points(group=group), key=lambda e: e.name)
    except Exception as exc:  # noqa: BLE001  (broken metadata on sys.path costs the outside objects, never the call)
        return out, [(group, "", f"the entry points could not be listed ({type(exc).__name__}: {exc})")]
    for ep in points:
        if ep.value.split(":")[0].startswith("trajcheck."):
            continue  # a built-in: loaded from the code
        try:
            got: Any = ep.load()
            obj = got() if callable(got) and not isinstance(got, kind) else got
        except Exception as exc:  # noqa: BLE001  (one that fails to load is named, never a crash)
            failed.append((ep.name, ep.value, f"failed to load: {type(exc).__name__}: {exc}"))
            continue
        if not isinstance(obj, kind):
            failed.append((ep.name, ep.value, f"is a {type(obj).__name__}, not a {kind.__module__}.{kind.__name__}"))
        elif name_of(obj) in taken:
            failed.append((ep.name, ep.value, f"is named {name_of(obj)!r}, as {what} already is"))
        else:
            taken.add(name_of(obj))
            out.append(obj)
    return out, failed
