"""The ledger schema version, apart from the Arrow schemas so that reading a manifest needs no pyarrow."""

#: Bumped whenever a column is added, renamed, removed or changes meaning; each bump has a migration
#: in schemas/migrations.py.
SCHEMA_VERSION = 4

#: The ledger's tables, in the order they are written.
TABLE_NAMES = ("runs", "steps")
