"""Reading untrusted pickles as plain data, without importing or running anything.

``pickle.load`` imports whatever module a pickle names and calls whatever it
names with whatever arguments it holds (``os.system("...")`` is two opcodes).
:class:`SafeUnpickler` overrides :meth:`~pickle.Unpickler.find_class`, the one
door through which a pickle reaches a callable, and hands back an inert
stand-in instead of the real global: calling it, ``NEWOBJ``-ing it or
``BUILD``-ing it only records the arguments and the state. Nothing is imported
and no code named by the pickle ever runs; a pickle that asks for
``os.system`` gets a :class:`PickledObject` that says so.

A few stand-ins have a known data meaning and are decoded from their bytes by
:func:`to_plain` (never by calling the library): ``pathlib`` paths become
strings, ``datetime`` values ISO strings, numpy scalars Python numbers, numpy
arrays a small marker (shape and dtype, no data).

What cannot be read as data (a persistent id, a truncated stream, an unknown
opcode) raises :class:`UnsafePickleError`; callers turn it into a located
:class:`~trajcheck.base.errors.Problem`.
"""

from __future__ import annotations

import gzip
import io
import pickle
import struct
import zlib
from typing import Any

from ...base.inputs import open_regular

#: Pickles larger than this (after gunzip) are refused; BrowserGym step pickles are KiB to a few MiB.
MAX_PICKLE_BYTES = 64 * 1024 * 1024


class UnsafePickleError(Exception):
    """The pickle cannot be read as plain data; the message says why."""


class PickledObject:
    """An inert stand-in for an instance of ``module.name``.

    ``args``/``kwargs`` are what the pickle passed to the constructor (REDUCE,
    NEWOBJ, NEWOBJ_EX); ``state`` is what it passed to ``__setstate__``
    (BUILD); ``items``/``listitems`` what it appended or set on it.
    """

    _module = "?"
    _name = "?"
    # Set in __new__ (a REDUCE/NEWOBJ of a stand-in reaches __new__ with the pickle's arguments); declared
    # here so that the type checker knows them. Annotations alone create no class attribute.
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    state: Any
    items: dict[Any, Any]
    listitems: list[Any]

    def __new__(cls, *args: Any, **kwargs: Any) -> "PickledObject":
        self = object.__new__(cls)
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "kwargs", kwargs)
        object.__setattr__(self, "state", None)
        object.__setattr__(self, "items", {})
        object.__setattr__(self, "listitems", [])
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # REDUCE calls cls(*args): nothing more to do
        pass

    def __setstate__(self, state: Any) -> None:  # BUILD
        object.__setattr__(self, "state", state)

    # SETITEM(S) and APPEND(S) on an object (dict and list subclasses pickle their content this way)
    def __setitem__(self, key: Any, value: Any) -> None:
        self.items[key] = value

    def append(self, value: Any) -> None:
        self.listitems.append(value)

    def extend(self, values: Any) -> None:
        self.listitems.extend(values)

    @property
    def qualname(self) -> str:
        return f"{self._module}.{self._name}"

    def __repr__(self) -> str:
        return f"<pickled {self.qualname} args={self.args!r} state={type(self.state).__name__}>"


class PickledGlobal:
    """A global the pickle names but never instantiates (e.g. a class passed as an argument)."""

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}"

    def __repr__(self) -> str:
        return f"<pickled global {self.qualname}>"


def _binary(kind: type) -> Any:
    def make(value: Any = b"", *rest: Any) -> Any:
        # bytes(n) / bytearray(n) would allocate n bytes: only copies of given data are built
        if isinstance(value, (bytes, bytearray)) and not rest:
            return kind(value)
        if isinstance(value, str) and len(rest) == 1 and rest[0] in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
            return kind(value, rest[0])
        if isinstance(value, list) and not rest and all(isinstance(v, int) for v in value):
            return kind(value)
        raise UnsafePickleError(f"{kind.__name__}() with these arguments is not plain data")
    return make


def _container(kind: type) -> Any:
    def make(value: Any = ()) -> Any:
        if not isinstance(value, (list, tuple, set, frozenset, dict, str, bytes)):
            raise UnsafePickleError(f"{kind.__name__}() of a {type(value).__name__} is not plain data")
        return kind(value)
    return make


# Pure-data builtins a pickle may name (protocols 0-1 spell sets and bytes through them). These
# wrappers build a container or number from the pickle's own plain values and reach no other code.
_SAFE_BUILTINS: dict[tuple[str, str], Any] = {}
for _mod in ("builtins", "__builtin__"):
    for _n, _f in (("set", _container(set)), ("frozenset", _container(frozenset)), ("list", _container(list)),
                   ("tuple", _container(tuple)), ("dict", _container(dict)),
                   ("bytearray", _binary(bytearray)), ("bytes", _binary(bytes))):
        _SAFE_BUILTINS[(_mod, _n)] = _f
    _SAFE_BUILTINS[(_mod, "object")] = object  # copyreg._reconstructor(cls, object, None) in protocols 0-1


def _codecs_encode(obj: Any, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    # protocols 0-2 write bytes as _codecs.encode(str, "latin1"); only text codecs are honoured
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        raise UnsafePickleError(f"_codecs.encode({type(obj).__name__}, {encoding!r}) is not plain data")
    return obj.encode(encoding, errors)


_SAFE_FUNCTIONS: dict[tuple[str, str], Any] = {
    ("_codecs", "encode"): _codecs_encode,
    ("codecs", "encode"): _codecs_encode,
}


#: Modules whose names in a pickle can only mean "run this": refused outright with a clear message.
_REFUSED_MODULES = frozenset({
    "os", "posix", "nt", "subprocess", "sys", "shutil", "socket", "importlib", "pickle", "_pickle", "marshal",
    "ctypes", "runpy", "code", "codeop", "pty", "webbrowser", "commands", "popen2", "platform", "signal",
    "multiprocessing", "threading", "_thread", "asyncio", "types", "functools", "operator", "inspect", "io",
    "_io", "tempfile", "glob", "requests", "urllib", "http", "ftplib", "smtplib", "telnetlib",
    "timeit", "pdb", "bdb", "trace", "cProfile", "profile", "site", "sysconfig",
    "zipimport", "pkgutil", "distutils", "setuptools", "pip", "dill", "cloudpickle",
})


class SafeUnpickler(pickle.Unpickler):
    """An unpickler that never imports a module nor calls anything a pickle names.

    Every ``module.name`` becomes a :class:`PickledObject` subclass created on the
    fly (one per name, per load); the few pure-data builtins listed above are the
    only real callables it hands out.
    """

    def __init__(self, file: io.BufferedIOBase, *, source: str = "pickle"):
        super().__init__(file)
        self.source = source
        self._classes: dict[tuple[str, str], type] = {}

    def find_class(self, module: str, name: str) -> Any:  # noqa: D401 - the override that matters
        key = (str(module), str(name))
        top = key[0].split(".")[0]
        if top in _REFUSED_MODULES or (top in ("builtins", "__builtin__") and key not in _SAFE_BUILTINS):
            # a stand-in would be inert too; saying so is clearer than data that names os.system
            raise UnsafePickleError(f"the pickle refers to {key[0]}.{key[1]}, which is code, not data "
                                    "(refused; nothing was imported or run)")
        if key in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[key]
        if key in _SAFE_FUNCTIONS:
            return _SAFE_FUNCTIONS[key]
        if key == ("copyreg", "_reconstructor") or key == ("copy_reg", "_reconstructor"):
            return _reconstructor
        if key == ("copyreg", "__newobj__") or key == ("copy_reg", "__newobj__"):
            return _newobj
        cls = self._classes.get(key)
        if cls is None:
            safe = "".join(c if c.isalnum() else "_" for c in key[1])[:60] or "obj"
            cls = type(f"Pickled_{safe}", (PickledObject,), {"_module": key[0], "_name": key[1],
                                                              "__slots__": ()})
            self._classes[key] = cls
        return cls

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError(f"persistent id {str(pid)[:60]!r} refers to data outside the file")


def _reconstructor(cls: Any, base: Any, state: Any = None) -> Any:
    # copyreg._reconstructor(cls, object, None): protocols 0-1 spelling of cls.__new__(cls)
    if isinstance(cls, type) and issubclass(cls, PickledObject):
        return cls.__new__(cls)
    raise UnsafePickleError("copyreg._reconstructor with a class that is not a pickled stand-in")


def _newobj(cls: Any, *args: Any) -> Any:
    if isinstance(cls, type) and issubclass(cls, PickledObject):
        return cls.__new__(cls, *args)
    raise UnsafePickleError("copyreg.__newobj__ with a class that is not a pickled stand-in")


def loads(data: bytes, *, source: str = "pickle") -> Any:
    """Read ``data`` as plain data (stand-ins included; see :func:`to_plain`).

    Raises :class:`UnsafePickleError` for anything that is not a complete,
    self-contained pickle.
    """
    if len(data) > MAX_PICKLE_BYTES:
        raise UnsafePickleError(f"{len(data)} bytes is over the {MAX_PICKLE_BYTES} byte limit")
    if not data:
        raise UnsafePickleError("the file is empty")
    try:
        return SafeUnpickler(io.BytesIO(data), source=source).load()
    except UnsafePickleError:
        raise
    except EOFError:
        raise UnsafePickleError("the pickle ends early (truncated file)") from None
    except RecursionError:
        raise UnsafePickleError("the pickle nests too deeply to read") from None
    except MemoryError:
        raise UnsafePickleError("the pickle asks for more memory than is available") from None
    except (pickle.UnpicklingError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            struct.error, UnicodeDecodeError, OverflowError) as exc:
        raise UnsafePickleError(f"not a readable pickle: {type(exc).__name__}: {exc}"[:300]) from None


def load_file(path: Any, *, source: str | None = None) -> Any:
    """Read a ``.pkl`` or ``.pkl.gz`` file with :func:`loads` (gzip detected by its magic bytes)."""
    src = source or str(path)
    try:
        with open(open_regular(path), "rb", closefd=True) as f:  # a FIFO is never opened: it would block
            raw = f.read(MAX_PICKLE_BYTES + 1)
    except OSError as exc:
        raise UnsafePickleError(f"cannot read: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as g:
                raw = g.read(MAX_PICKLE_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise UnsafePickleError(f"gzip data is corrupt or truncated ({exc})") from None
    return loads(raw, source=src)


# --- turning stand-ins into plain JSON-like data ------------------------------------------------

#: Marker left where a numpy array was (its data is not kept).
NDARRAY = "__ndarray__"

_NUMPY_MODULES = {"numpy", "numpy.core.multiarray", "numpy._core.multiarray", "numpy.core.numeric",
                  "numpy._core.numeric"}
_STRUCT_CODES = {"f8": "d", "f4": "f", "f2": "e", "i8": "q", "i4": "i", "i2": "h", "i1": "b",
                 "u8": "Q", "u4": "I", "u2": "H", "u1": "B", "b1": "?"}


def _dtype_info(dt: Any) -> tuple[str | None, str]:
    """(kind code such as 'f8', byte order '<' or '>') of a pickled numpy.dtype stand-in."""
    if not isinstance(dt, PickledObject) or dt._name != "dtype":
        return None, "<"
    code = dt.args[0] if dt.args and isinstance(dt.args[0], str) else None
    order = "<"
    st = dt.state
    if isinstance(st, tuple) and len(st) > 1 and st[1] in ("<", ">", "|", "="):
        order = ">" if st[1] == ">" else "<"
    return code, order


def _numpy_scalar(obj: PickledObject) -> Any:
    # numpy.core.multiarray.scalar(dtype, raw_bytes)
    if len(obj.args) == 2 and isinstance(obj.args[1], (bytes, bytearray)):
        code, order = _dtype_info(obj.args[0])
        fmt = _STRUCT_CODES.get(code or "")
        if fmt and struct.calcsize(fmt) == len(obj.args[1]):
            (v,) = struct.unpack(order + fmt, bytes(obj.args[1]))
            return v
    return {NDARRAY: True, "scalar": True, "dtype": _dtype_info(obj.args[0])[0] if obj.args else None}


#: Numeric arrays with at most this many elements are decoded (e.g. BrowserGym's active_page_index);
#: bigger ones (screenshots, masks) are left as a marker.
MAX_ARRAY_ELEMENTS = 64


def _ndarray(obj: PickledObject) -> Any:
    """A small 0-d/1-d numeric array as a list of numbers (decoded with :mod:`struct` from the bytes
    the pickle holds); anything else as ``{"__ndarray__": true, "shape", "dtype"}``."""
    # _reconstruct(ndarray, (0,), b'b') then BUILD (version, shape, dtype, is_fortran, rawdata),
    # or, protocol 5: numpy.core.numeric._frombuffer(buffer, dtype, shape, order)
    st = obj.state
    if obj._name == "_frombuffer" and len(obj.args) >= 3:
        st = (1, obj.args[2], obj.args[1], False, obj.args[0])
    shape = None
    dtype = None
    order = "<"
    raw = None
    if isinstance(st, tuple) and len(st) >= 5:
        shape = list(st[1]) if isinstance(st[1], tuple) and all(isinstance(n, int) for n in st[1]) else None
        dtype, order = _dtype_info(st[2])
        raw = st[4]
    fmt = _STRUCT_CODES.get(dtype or "")
    if shape is not None and len(shape) <= 1 and fmt and isinstance(raw, (bytes, bytearray)):
        n = shape[0] if shape else 1
        if n <= MAX_ARRAY_ELEMENTS and struct.calcsize(fmt) * n == len(raw):
            values = list(struct.unpack(f"{order}{n}{fmt}", bytes(raw)))
            return values if shape else values[0]
    return {NDARRAY: True, "shape": shape, "dtype": dtype}


def _datetime_iso(obj: PickledObject) -> Any:
    # datetime.datetime(b'<10 bytes>'[, tzinfo]) / date(b'<4 bytes>'): decode the documented byte layout
    raw = obj.args[0] if obj.args else None
    if isinstance(raw, str):  # protocol 0-2 pickles carry the bytes as a latin-1 string
        raw = raw.encode("latin1")
    if obj._name == "datetime" and isinstance(raw, (bytes, bytearray)) and len(raw) == 10:
        b = bytes(raw)
        year = b[0] * 256 + b[1]
        usec = (b[7] << 16) | (b[8] << 8) | b[9]
        text = f"{year:04d}-{b[2]:02d}-{b[3]:02d}T{b[4]:02d}:{b[5]:02d}:{b[6]:02d}"
        return text + (f".{usec:06d}" if usec else "")
    if obj._name == "date" and isinstance(raw, (bytes, bytearray)) and len(raw) == 4:
        b = bytes(raw)
        return f"{b[0] * 256 + b[1]:04d}-{b[2]:02d}-{b[3]:02d}"
    return {"__class__": obj.qualname, "args": to_plain(list(obj.args))}


#: to_plain visits at most this many values: a pickle can reference one list from many places
#: (memo), so a few KiB can stand for an exponentially large tree.
MAX_PLAIN_NODES = 1_000_000


def to_plain(value: Any, _depth: int = 0, _budget: list[int] | None = None) -> Any:
    """Convert what :func:`loads` returned into dicts, lists, strings and numbers.

    An object becomes ``{"__class__": "module.name", **its state}`` (its
    ``__dict__``-style state merged in when it is a dict), with ``"args"`` when it
    was built from constructor arguments.
    """
    if _budget is None:
        _budget = [MAX_PLAIN_NODES]
    _budget[0] -= 1
    if _budget[0] < 0:
        raise UnsafePickleError(f"the pickle expands to more than {MAX_PLAIN_NODES} values")
    if _depth > 200:
        raise UnsafePickleError("the pickle nests too deeply to read")
    d = _depth + 1
    b = _budget
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return {"__bytes__": len(value)}
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else str(to_plain(k, d, b))): to_plain(v, d, b) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v, d, b) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [to_plain(v, d, b) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, complex):
        return [value.real, value.imag]
    if isinstance(value, PickledGlobal):
        return {"__global__": value.qualname}
    if isinstance(value, type) and issubclass(value, PickledObject):
        return {"__global__": f"{value._module}.{value._name}"}
    if isinstance(value, PickledObject):
        mod, name = value._module, value._name
        if mod in ("pathlib", "pathlib._local") and name.endswith("Path"):
            return "/".join(str(a) for a in value.args) if all(isinstance(a, str) for a in value.args) else None
        if mod == "datetime" and name in ("datetime", "date"):
            return _datetime_iso(value)
        if mod in _NUMPY_MODULES and name == "scalar":
            return _numpy_scalar(value)
        if mod in _NUMPY_MODULES and name in ("_reconstruct", "ndarray", "_frombuffer"):
            return _ndarray(value)
        if mod == "numpy" and name == "dtype":
            return {"__dtype__": _dtype_info(value)[0]}
        if mod == "collections" and name in ("OrderedDict", "defaultdict", "Counter"):
            return {str(to_plain(k, d, b)): to_plain(v, d, b) for k, v in value.items.items()}
        out: dict[str, Any] = {"__class__": value.qualname}
        if value.args:
            out["args"] = to_plain(list(value.args), d, b)
        if value.kwargs:
            out["kwargs"] = to_plain(dict(value.kwargs), d, b)
        st = value.state
        if isinstance(st, tuple) and len(st) == 2 and (st[0] is None or isinstance(st[0], dict)) \
                and isinstance(st[1], dict):
            st = {**(st[0] or {}), **st[1]}  # (__dict__, __slots__ state)
        if isinstance(st, dict):
            for k, v in st.items():
                key = k if isinstance(k, str) else str(to_plain(k, d, b))
                out[key if key not in ("__class__", "args", "kwargs") else f"state.{key}"] = to_plain(v, d, b)
        elif st is not None:
            out["state"] = to_plain(st, d, b)
        if value.items:
            out["items"] = {str(to_plain(k, d, b)): to_plain(v, d, b) for k, v in value.items.items()}
        if value.listitems:
            out["listitems"] = to_plain(value.listitems, d, b)
        return out
    raise UnsafePickleError(f"cannot map a {type(value).__name__} to plain data")


def load_plain(path: Any, *, source: str | None = None) -> Any:
    """:func:`load_file` then :func:`to_plain`."""
    return to_plain(load_file(path, source=source))
