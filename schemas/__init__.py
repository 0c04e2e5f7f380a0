"""Contracts of trajcheck's data: the run-directory format and the ledger tables."""

from importlib import resources
import json
from functools import cache
from typing import Any


@cache
def load_json_schema(name: str) -> dict[str, Any]:
    """Return one of the packaged JSON Schemas (``run`` or ``step``)."""
    text = resources.files(__package__).joinpath(f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)
