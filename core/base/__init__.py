"""The lowest layer: errors, the catalogues of problems and reasons, bounded reading of a run's files, JSON, the
pHash value and its on-disk cache, atomic writes, the scoring options and the statistics every layer above uses."""
