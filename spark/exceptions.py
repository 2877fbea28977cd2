"""delta-spark's exception names (``delta.exceptions``), for code written against delta-spark.

``from deltaspec.spark.exceptions import ConcurrentAppendException`` catches what
``from delta.exceptions import ConcurrentAppendException`` catches there: every name here *is*
the class deltaspec raises (the conflict classes of deltaspec.impl.errors already carry
delta-spark's names), so ``except ConcurrentAppendException`` works unchanged after switching
the import. Each class also has ``error_class`` (delta-spark's error class, e.g.
``DELTA_CONCURRENT_APPEND``) and ``getErrorClass()``/``getCondition()`` as PySpark's exceptions
have them, so code that dispatches on the error class works too.
"""

from __future__ import annotations

from ..impl.errors import (
    ConcurrentAppendException,
    ConcurrentDeleteDeleteException,
    ConcurrentDeleteReadException,
    ConcurrentTransactionException,
    ConcurrentWriteException,
    DeltaConcurrentModificationException,
    DeltaError,
    MetadataChangedException,
    ProtocolChangedException,
)
from . import errors as spark_errors

# delta.exceptions' base classes: DeltaAnalysisException (user errors Spark reports at analysis)
# and DeltaIllegalArgumentException (bad options); ours are the typed errors below them.
DeltaAnalysisException = DeltaError
DeltaIllegalArgumentException = spark_errors.InvalidOptionError
DeltaUnsupportedOperationException = spark_errors.UnsupportedSubqueryError

__all__ = [
    "ConcurrentAppendException",
    "ConcurrentDeleteDeleteException",
    "ConcurrentDeleteReadException",
    "ConcurrentTransactionException",
    "ConcurrentWriteException",
    "DeltaAnalysisException",
    "DeltaConcurrentModificationException",
    "DeltaIllegalArgumentException",
    "DeltaUnsupportedOperationException",
    "MetadataChangedException",
    "ProtocolChangedException",
]
