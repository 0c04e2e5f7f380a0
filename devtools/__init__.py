"""Development tools that read or document trajcheck's code (the import graph and its layers, the API page, the
exit-code table, the reasons page). Run from the repository's root; not part of the installed package."""
