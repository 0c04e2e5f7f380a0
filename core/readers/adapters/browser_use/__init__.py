"""browser-use ``AgentHistoryList`` histories: ``reader`` (the reader), ``actions`` (one action entry as a
trajcheck action), ``history`` (the history file read whole or streamed, and its screenshots)."""
