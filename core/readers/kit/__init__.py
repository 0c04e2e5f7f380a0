"""The reader kit: what every reader is built from, the built-in adapters and a harness's own alike. The
``Reader`` base (``reader``), reading a log's files with problems that name them (``reading``), screenshots
(``screenshots``), the space of action points (``coords``), large JSON one item at a time (``stream``),
transcripts whose screenshots come in tool results (``sparse``), token counts and costs (``usage``)."""
