"""trajcheck's version, in a module of its own: the ledger, the digests and the reports stamp it, and importing
it from the package (``trajcheck/__init__``, which imports the public API) would make each of them import
everything the API does (docs/architecture.md, "Imports")."""

__version__ = "0.1.0"
