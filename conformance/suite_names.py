"""The conformance corpus's suites by name, in the order a run goes through them: what
``deltaspec conformance --suite`` offers and corpus_run.py runs. Its own module, with nothing
imported, because the ``deltaspec`` command builds its parsers on every start and corpus_run
pulls in pyarrow, the model and the impl."""

from __future__ import annotations

SUITES = ("scenarios", "fixtures", "writes", "logs")
