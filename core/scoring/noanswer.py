"""How a run ends is declared, never assumed: the no-answer rule applies only where the format says so.

The referee fails a run that ended without an answer (``verdict_source = no_answer``: no DONE, no finish action,
no infeasible report, no outcome status) only when its format declares that its harness ends a run by the
agent's answer or by a limit that cuts the agent off (``ends = answer``: a step budget, a crash), as benchmarks
count such a run. A harness that may stop a run itself (``ends = external``: its own state check passed, a
person stopped it) ends its successes without an answer too, so there the end of a run is no evidence: the run is
``unknown`` (``harness_may_stop``). Where nothing declares it, the run is ``unknown`` too (``ends_undeclared``),
and the reason says to declare it.

The declaration comes from the run itself where its format can carry one (run.json ``ends``), else from its
reader: each built-in reader declares what its harness does (:attr:`trajcheck.readers.kit.reader.Reader.ends`), a
mapping file its ``[run] ends``. Each run's verdict depends on its own files and its reader only, never on the
other runs of the batch.
"""

from __future__ import annotations

from dataclasses import replace

from ..readers.kit.reader import Reader
from ..schemas.records import Run


def declared_ends(run: Run, reader: Reader) -> Run:
    """``run`` with how its harness ends a run: its own declaration, else its reader's (None: neither says)."""
    if run.ends is not None or reader.ends is None:
        return run
    return replace(run, ends=reader.ends)
