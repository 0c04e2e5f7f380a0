"""UI-TARS logs: ``reader`` (the reader), ``actions`` (UI-TARS's action grammar), ``logs`` (the shapes of its
logs as one timeline), ``shape`` (which logs are UI-TARS logs, by their parsed shape)."""
