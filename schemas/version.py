"""The ledger schema version, apart from the Arrow schemas so that reading a manifest needs no pyarrow."""

#: Bumped whenever a column is renamed, removed or changes meaning.
SCHEMA_VERSION = 2

#: The ledger's tables, in the order they are written.
TABLE_NAMES = ("runs", "steps")
