"""Record trajcheck runs from any harness: :class:`RunWriter` writes a ``trajcheck.run/1`` directory.

    with trajcheck.RunWriter("runs/ep-0042", run_id="ep-0042", task_id="checkout", screen=(1280, 800)) as w:
        w.observe(env.screenshot())                   # the screen before the first action
        for turn in range(max_turns):
            action, thought = agent.act(...)
            env.execute(action)
            w.step(action, post=env.screenshot(), reasoning=thought, page={"url_after": env.url})
        w.finish(outcome={"status": "done"})

The run is written into a hidden sibling folder (``.ep-0042.partial-<hex>``) and renamed into place by
:meth:`RunWriter.finish`: a harness killed midway leaves no half run that scores as complete (discovery
skips hidden folders), and ``finish`` refuses to replace an existing run. Frames are PNG/JPEG/WebP bytes,
a path to such a file, an (H, W[, 3|4]) uint8 numpy array or a PIL image; a frame equal to the one before
(the post of one step and the pre of the next) is stored once.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from .base.atomic import commit
from .base.errors import RunFormatError
from .base.inputs import image_ext

FORMAT = "trajcheck.run/1"


class RunWriter:
    """Write one run, step by step; see the module docstring."""

    def __init__(self, path: str | os.PathLike[str], *, run_id: str | None = None, task_id: str | None = None,
                 goal: str | None = None, screen: tuple[int, int] | None = None, config: dict[str, Any] | None = None,
                 agent: dict[str, Any] | None = None, trial: int | None = None, started_at: str | None = None,
                 **extra: Any) -> None:
        self.path = Path(path)
        if self.path.exists():
            raise FileExistsError(f"{self.path} exists: a RunWriter writes a new run directory")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.parent / f".{self.path.name}.partial-{uuid.uuid4().hex[:12]}"
        (self._tmp / "frames").mkdir(parents=True)
        self.meta: dict[str, Any] = {"format": FORMAT, "run_id": run_id or self.path.name}
        for k, v in (("task_id", task_id), ("trial", trial), ("goal", goal), ("agent", agent), ("config", config),
                     ("started_at", started_at)):
            if v is not None:
                self.meta[k] = v
        if screen is not None:
            self.meta["screen"] = {"width": int(screen[0]), "height": int(screen[1])}
        self.meta.update(extra)
        self._steps: list[dict[str, Any]] = []
        self._frames: dict[str, str] = {}  # content digest -> relative path
        self._current: str | None = None  # the screen as last seen (relative path)
        self._done = False

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if not self._done:
            self.abort()

    # -- frames ---------------------------------------------------------------------------------------
    def _store(self, frame: Any) -> str:
        """Store a frame once; its path relative to the run directory."""
        data, ext = _encode(frame)
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if digest in self._frames:
            return self._frames[digest]
        rel = f"frames/{len(self._frames) + 1:04d}.{ext}"
        (self._tmp / rel).write_bytes(data)
        self._frames[digest] = rel
        return rel

    def observe(self, frame: Any) -> str:
        """The screen as it is now (before the next action): the next step's pre frame."""
        self._current = self._store(frame)
        return self._current

    # -- steps ------------------------------------------------------------------------------------------
    def step(self, action: dict[str, Any] | str, *, post: Any = None, pre: Any = None,
             frames: tuple[Any, Any] | dict[str, Any] | None = None, reasoning: str | None = None,
             page: dict[str, Any] | None = None, client: dict[str, Any] | None = None, ok: bool | None = None,
             error: str | None = None, **extra: Any) -> int:
        """Record one action and its evidence; returns the step's index. ``action`` is a run-format action
        ({"type": "CLICK", "x": 412, "y": 230}; a bare type name for actions without fields). ``pre``
        defaults to the last observed screen; ``post`` becomes the observed screen. ``frames`` gives both at
        once, as (pre, post) or {"pre": ..., "post": ...}. ``ok``/``error``: what the executor said. Other
        keyword arguments are step properties (``semantic``, ``expected``, ``predict``, ``usage`` {tokens_input,
        tokens_output, tokens_cached, tokens_reasoning, cost_usd, model}, ``wall_seconds``...)."""
        if self._done:
            raise RuntimeError("the run is finished")
        if frames is not None:
            pre, post = (frames.get("pre"), frames.get("post")) if isinstance(frames, dict) else frames
        act = {"type": action} if isinstance(action, str) else dict(action)
        if "type" not in act:
            raise ValueError("an action needs a type, e.g. {'type': 'CLICK', 'x': 10, 'y': 20}")
        rec: dict[str, Any] = {"index": len(self._steps) + 1, "action": act}
        if reasoning is not None:
            rec["reasoning"] = reasoning
        pre_rel = self._store(pre) if pre is not None else self._current
        post_rel = self._store(post) if post is not None else None
        if pre_rel or post_rel:
            rec["frames"] = {k: v for k, v in (("pre", pre_rel), ("post", post_rel)) if v}
        if post_rel:
            self._current = post_rel
        if ok is not None or error is not None:
            rec["executor"] = {"ok": error is None if ok is None else ok, "error": error}
        if page:
            rec["page"] = page
        if client:
            rec["client"] = client
        rec.update(extra)
        self._steps.append(rec)
        return rec["index"]

    # -- the end ----------------------------------------------------------------------------------------
    def finish(self, outcome: dict[str, Any] | None = None) -> Path:
        """Write run.json and steps.jsonl, check them as `trajcheck validate` would (a record it would refuse
        raises :class:`~trajcheck.base.errors.RunFormatError`, and nothing is renamed), and move the run into
        place. Returns the run directory."""
        if self._done:
            raise RuntimeError("the run is finished")
        meta = dict(self.meta)
        if outcome is not None:
            meta["outcome"] = outcome
        (self._tmp / "run.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", "utf-8")
        (self._tmp / "steps.jsonl").write_text(
            "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in self._steps), "utf-8")
        from .readers.rundir import read_native_run  # checks both files against the JSON Schemas

        read_native_run(self._tmp, str(self.path))  # raises RunFormatError with located problems
        if self.path.exists():
            raise FileExistsError(f"{self.path} appeared while the run was written; the run is kept at {self._tmp}")
        commit(self._tmp, self.path)
        self._done = True
        return self.path

    def abort(self) -> None:
        """Drop what was written (a run given up); nothing appears at ``path``."""
        shutil.rmtree(self._tmp, ignore_errors=True)
        self._done = True


def _encode(frame: Any) -> tuple[bytes, str]:
    """A frame as file bytes and extension."""
    if isinstance(frame, (bytes, bytearray, memoryview)):
        data = bytes(frame)
    elif isinstance(frame, (str, os.PathLike)):
        data = Path(frame).read_bytes()
    else:
        import numpy as np
        from PIL import Image

        img = Image.fromarray(np.ascontiguousarray(frame)) if isinstance(frame, np.ndarray) else frame
        if not isinstance(img, Image.Image):
            raise TypeError(f"a frame is image bytes, a path, a numpy array or a PIL image, not {type(frame).__name__}")
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue(), "png"
    ext = image_ext(data)
    if ext is None:
        raise ValueError("a frame must be a PNG, JPEG or WebP image")
    return data, ext


__all__ = ["RunWriter", "RunFormatError"]
