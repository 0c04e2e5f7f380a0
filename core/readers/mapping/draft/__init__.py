"""Drafting a mapping from a folder of runs (``trajcheck draft-mapping FOLDER``): ``compose`` (the draft, from a
sample of the runs), ``files`` (the log, the screenshots and a results file around it), ``steps`` (the step's
fields from sampled steps), ``vocab`` (what names say: action names and the keys that hold each field)."""
