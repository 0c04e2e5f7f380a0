"""Pure, deterministic functions from evidence to findings. No I/O, no printing.

One analyzer per module. Those that need a decoded frame or a DOM tree (``pixeldiff``, ``page`` with
``observation``, ``skeleton`` and ``messages``) run while :mod:`trajcheck.scoring.loading` has it in memory; the
others run in :mod:`trajcheck.scoring.analysis`, in order, on what those found:

- ``ambient``: which parts of the screen change on their own (learned per page);
- ``highrisk``: is an action high-risk (the original verifier's table of keys and keywords);
- ``pixeldiff``: the exact pixel change between two frames, its blobs and their shapes;
- ``perceptual``: did a high-risk action visibly change the screen (trajcheck's rule and the literal one);
- ``page``: a step's page facts from its DOM snapshots (with ``observation``, ``skeleton``, ``messages``);
- ``predictions``: the agent's recorded predictions, checked;
- ``loops``: drift loops and the done gate;
- ``contract`` and ``referee``: the outcome contract, the judges and the final verdict;
- ``reward`` (one step) and ``lookback`` (the run, step by step): evidence rewards;
- ``evidence``: the evidence referee; ``claims``: what the agent claimed; ``answers``: reference answers.
- ``spend``: tokens, cost and time per step and per run, a cost priced from the user's list only where the log
  records none.
"""
