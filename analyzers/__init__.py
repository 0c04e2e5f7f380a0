"""Pure, deterministic functions from evidence to findings. No I/O, no printing.

Registry of the analyzers and the ledger column prefix each one owns.
"""

ANALYZERS: dict[str, str] = {
    "highrisk": "effect_",  # the seed's high-risk classifier
    "pixeldiff": "effect_",  # exact pixel change, blobs and their shapes
    "ambient": "effect_",  # change the run shows happens on its own
    "perceptual": "effect_",  # the perceptual diff verifier (plus the seed's own column names)
}
