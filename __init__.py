"""Not a module anyone imports: it marks the checkout as the tree of one package, so tools that
resolve imports by file path (not by pyproject.toml's ``package-dir``) see that the top folders
are siblings. ``from ..impl.snapshot.delta_log import DeltaLog`` in ``spark/write.py`` is
``deltaspec.impl.snapshot.delta_log`` to Python and ``impl/snapshot/delta_log.py`` to a reader of
the tree. The import root itself, ``deltaspec``, is ``src/deltaspec``; see ARCHITECTURE.md."""
