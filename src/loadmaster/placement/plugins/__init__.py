"""One file per placement plugin, named as ``placement/registry.py`` registers it: ``filters/`` holds what
rules a node out (each with its rejection category), ``scorers/`` what ranks the nodes that remain (and
the small counting rules only scorers use). A scorer may call a filter's predicate (``fits``,
``ports_free``); a filter never reads a scorer."""
