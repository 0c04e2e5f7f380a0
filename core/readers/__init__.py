"""Reading runs: the native format (``rundir``), mapping files, discovery of the runs under a folder, the format
adapters (``adapters``) and the kit they are built from (``kit``)."""
