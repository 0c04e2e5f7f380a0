"""Playwright traces (``trace.zip``): ``reader`` (the reader), ``archive`` (the zip read in place, within
limits), ``events`` (the trace's events gathered into calls and frames)."""
