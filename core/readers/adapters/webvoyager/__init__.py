"""WebVoyager runs (``interact_messages.json`` + screenshots): ``reader`` (the reader), ``actions`` (the
``Thought: ... Action: ...`` reply grammar)."""
