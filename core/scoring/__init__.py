"""Scoring: every read that scoring does (``loading``, ``contracts``), one run (``analysis``, ``rows``, ``scorerun``),
what needs scoring (``digest``, ``incremental``), validation, and many runs (``pipeline``, ``engines``)."""
