"""The Parquet ledger, its manifest and writer lock, and DuckDB views for reading it."""
