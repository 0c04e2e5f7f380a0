"""Mapping files: logs of any other shape, read through a TOML file that says where a log keeps its steps and
their fields (``trajcheck score LOGS --mapping my-harness.toml``; the format: :mod:`.reader` and docs/formats.md).

* ``schema``: a mapping file compiled and checked (:class:`~.schema.Mapping`); ``fields``, ``outcome`` and
  ``grammars``: its fields, its recorded outcome and the action grammars it may name;
* ``steps`` and ``read``: the shapes steps come from, and one run read through a mapping;
* ``reader``: a mapping's reader among discovery's, and why a mapping read nothing;
* ``reach``: how much of a folder a mapping reads (``draft-mapping --check``);
* ``draft/``: a mapping drafted from a folder (``trajcheck draft-mapping``).
"""
