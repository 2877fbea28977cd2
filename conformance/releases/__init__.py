"""Published delta-spark releases as live engines, each in its own process and Python.

engines.json pins one entry per release line that runs on Java 17 with a pyspark from PyPI: the
Maven coordinate, the Spark it was built for, the pyspark that runs it and the sha256 of every
file fetched. ``deltaspec engines fetch`` fills the cache (cache.py), ``--adapter
deltaspark@X.Y.Z`` runs the spec-only bridge on that engine."""
