"""The ledger schema version, apart from the Arrow schemas so that reading a manifest needs no pyarrow."""

from .migrations import MIGRATIONS

#: The native run format's name (run.json ``format``, ``--input-format``, the runs table's source_format).
RUN_FORMAT = "trajcheck.run/1"

#: The last migration's version: a column added, renamed, removed or changed in meaning is a new entry in
#: schemas/migrations.py, which is the one place the version moves.
SCHEMA_VERSION = MIGRATIONS[-1].version

#: The ledger's tables, in the order they are written.
TABLE_NAMES = ("runs", "steps")
