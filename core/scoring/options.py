"""Scoring options: what every analyzer is told, and what every run digest covers.

Kept apart from the pipeline so that deciding what needs scoring (``incremental``)
does not load the analyzers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analyzers.observation_options import ObservationOptions
from ..analyzers.effect_options import PerceptualOptions
from ..analyzers.spend import Price
from .scoreargs import OcrMode
from .judgments import Judgment

if TYPE_CHECKING:
    from ..readers.kit.reader import Reader


@dataclass(frozen=True)
class MappingFile:
    """A ``--mapping`` file as data: its path (named in messages and, by its stem, in the reader's name) and the
    bytes the caller read. It travels with the options to every worker (a process of the local pool, a Dask
    worker on another machine), which compiles those bytes (:meth:`ScoreOptions.readers`): nothing is registered
    in a process, and a worker need not see the file."""

    path: Path
    source: bytes


@dataclass(frozen=True)
class ScoreOptions:
    """What every analyzer of a :func:`trajcheck.score` call is told; part of every run's digest."""

    perceptual: PerceptualOptions = field(default_factory=PerceptualOptions)
    pixel_tolerance: int = 0  # a pixel changed when a channel differs by more than this
    observation: ObservationOptions = field(default_factory=ObservationOptions)
    contracts_dir: Path | None = None  # DIR/<task_id>.json contracts (a run's own contract.json wins)
    evaluator_pass: float = 1.0  # an evaluator score (outcome.score) at or above this is a pass
    #: Reference step counts by task_id, from a tasks file (:func:`read_tasks`): runs.efficiency.
    reference_steps: tuple[tuple[str, int], ...] = ()
    #: Read the screen with OCR (docs/referee.md, "Screen text"): ``auto`` where no DOM snapshot says what the
    #: page showed, ``always`` also where one does (recording whether the two agree), ``off`` never.
    ocr: OcrMode = OcrMode.AUTO
    #: Model prices from a price list (:func:`read_prices`): the cost of runs whose logs record tokens but no cost.
    prices: tuple[Price, ...] = ()
    #: The judgments of judges users run (``score --judgments``, :func:`trajcheck.scoring.judgments.read_judgments`).
    judgments: tuple[Judgment, ...] = ()
    #: The mapping file that reads this call's logs of another shape (``score --mapping``), or None. Not part of
    #: the options' fingerprint: its reader's name, ``mapping:<stem>@<hash>``, is in each mapped run's digest.
    mapping: MappingFile | None = None

    def readers(self) -> "tuple[Reader, ...]":
        """This call's own readers, asked with every call's (:func:`trajcheck.readers.discovery.discover`'s
        ``extra``): the mapping's, compiled once per process; none without a mapping (and then the mapping
        modules stay unloaded)."""
        if self.mapping is None:
            return ()
        from ..readers.mapping.reader import compiled

        return (compiled(str(self.mapping.path), self.mapping.source),)

    def judgments_of(self, run_id: str) -> list[Judgment]:
        """The judgments of ``run_id``, in the order given."""
        if not self.judgments:
            return []
        if _by_run[0] is not self.judgments:  # indexed once per options object, not once per run
            index: dict[str, list[Judgment]] = {}
            for j in self.judgments:
                index.setdefault(j.run_id, []).append(j)
            _by_run[:] = [self.judgments, index]
        return list(_by_run[1].get(run_id, []))

    def reference_steps_of(self, task_id: str | None) -> int | None:
        """The tasks file's reference step count of ``task_id`` (None: not listed)."""
        return dict(self.reference_steps).get(task_id) if task_id is not None else None


_by_run: list[Any] = [None, {}]  # the judgments last indexed, and their index by run_id

#: The most tasks a tasks file may list (a benchmark has hundreds to a few thousand).
MAX_TASKS = 100_000


def read_tasks(path: Path) -> tuple[tuple[str, int], ...]:
    """A tasks file's reference step counts, sorted by task: JSON ``{task_id: N}`` or ``{task_id:
    {"reference_steps": N, ...}}``, or CSV with the columns ``task_id`` and ``reference_steps`` (as
    OSWorld-Human publishes per-task step counts). ValueError naming the line or key of anything else."""
    import csv
    import json

    from ..base.inputs import read_regular

    limit = 64 * 1024 * 1024
    data_bytes = read_regular(path, limit=limit)
    if len(data_bytes) > limit:
        raise ValueError(f"{path}: over the {limit} byte limit of a tasks file")
    raw = data_bytes.decode("utf-8-sig")
    pairs: list[tuple[str, object, str]] = []
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(raw.splitlines()))
        if rows and not {"task_id", "reference_steps"} <= set(rows[0]):
            raise ValueError(f"{path}: a CSV tasks file needs the columns task_id and reference_steps")
        pairs = [(r["task_id"], r["reference_steps"], f"line {i}") for i, r in enumerate(rows, start=2)]
    else:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a JSON tasks file is an object {{task_id: reference_steps}}")
        for k, v in data.items():
            pairs.append((k, v.get("reference_steps") if isinstance(v, dict) else v, f"key {k!r}"))
    if len(pairs) > MAX_TASKS:
        raise ValueError(f"{path}: {len(pairs)} tasks, over the limit of {MAX_TASKS}")
    out: dict[str, int] = {}
    for task, steps, where in pairs:
        try:
            n = int(str(steps).strip()) if not isinstance(steps, bool) else 0
        except ValueError:
            n = 0
        if n < 1 or (isinstance(steps, float) and steps != n):
            raise ValueError(f"{path}, {where}: reference_steps must be a whole number of steps, 1 or more "
                             f"(got {steps!r})")
        out[str(task)] = n
    return tuple(sorted(out.items()))


#: The most models a price list may hold.
MAX_PRICES = 10_000
#: A price list's columns (CSV) or keys (TOML): USD per million tokens; the cached price is optional.
PRICE_FIELDS = ("input_per_million", "output_per_million", "cached_per_million")


def _price_number(value: object, where: str, key: str, path: Path) -> float | None:
    """A price as a finite number, 0 or more (None for an optional one left empty); ValueError naming it."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if key == "cached_per_million":
            return None
        raise ValueError(f"{path}, {where}: {key} is missing (USD per million tokens)")
    try:
        v = float(str(value).strip()) if not isinstance(value, bool) else -1.0
    except ValueError:
        v = -1.0
    if not 0 <= v < float("inf"):
        raise ValueError(f"{path}, {where}: {key} must be a price in USD per million tokens, 0 or more (got {value!r})")
    return v


def read_prices(path: Path) -> tuple[Price, ...]:
    """A price list: the price in USD per million tokens of each model, input and output, and optionally of
    cached input. CSV with the columns ``model``, ``input_per_million``, ``output_per_million`` and optionally
    ``cached_per_million``; or TOML, a table per model: ``[models."gpt-4o"]`` with those keys. A model name may
    be an ``fnmatch`` pattern (``claude-3-5-sonnet-*``). ValueError naming the line or model of anything else."""
    import csv
    import tomllib

    from ..base.inputs import read_regular

    limit = 16 * 1024 * 1024
    data_bytes = read_regular(path, limit=limit)
    if len(data_bytes) > limit:
        raise ValueError(f"{path}: over the {limit} byte limit of a price list")
    raw = data_bytes.decode("utf-8-sig")
    entries: list[tuple[str, dict[str, object], str]] = []
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = list(csv.DictReader(raw.splitlines()))
        need = {"model", *PRICE_FIELDS[:2]}
        if not rows or not need <= set(rows[0]):
            raise ValueError(f"{path}: a CSV price list needs the columns model, input_per_million and "
                             "output_per_million (USD per million tokens), and optionally cached_per_million")
        entries = [(r["model"] or "", dict(r), f"line {i}") for i, r in enumerate(rows, start=2)]
    elif suffix == ".toml":
        models = tomllib.loads(raw).get("models")
        if not isinstance(models, dict) or not models:
            raise ValueError(f'{path}: a TOML price list has a table per model, [models."NAME"], with '
                             "input_per_million and output_per_million (USD per million tokens)")
        for name, v in models.items():
            if not isinstance(v, dict):
                raise ValueError(f'{path}, models."{name}": expected a table with input_per_million and '
                                 "output_per_million")
            entries.append((str(name), v, f'models."{name}"'))
    else:
        raise ValueError(f"{path}: a price list is a .csv or a .toml file")
    if len(entries) > MAX_PRICES:
        raise ValueError(f"{path}: {len(entries)} models, over the limit of {MAX_PRICES}")
    out: dict[str, Price] = {}
    for name, fields, where in entries:
        model = name.strip()
        if not model:
            raise ValueError(f"{path}, {where}: the model name is empty")
        if model.casefold() in out:
            raise ValueError(f"{path}, {where}: {model!r} is listed twice")
        inp, outp, cached = (_price_number(fields.get(k), where, k, path) for k in PRICE_FIELDS)
        assert inp is not None and outp is not None  # required: _price_number raised without them
        out[model.casefold()] = Price(model, inp, outp, cached)
    return tuple(out.values())
