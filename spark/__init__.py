"""The PySpark write path: delta-spark's Python API (``DeltaTable``, ``format("deltaspec")``)
over DataFrame writes, DML, compaction and reads on Spark, committed through deltaspec's own log
(deltaspec.impl.txn.transaction). See docs/guides/pyspark.md.

This module is the Spark path's front door: what it exports is the public API. Two modules mirror
delta-spark's own so that code written against it changes one import: ``deltaspec.spark.tables``
(``delta.tables``) and ``deltaspec.spark.exceptions`` (``delta.exceptions``)."""

from .datasource import register
from .operations import DmlResult, MergeClause, delete, merge, update
from .operations.compaction import CompactionResult, TableFailure, compact, compact_tables
from .read import read_table
from .s3a import S3Endpoint, configure_s3
from .session import configure, local_session
from .streaming import idempotent_writer
from .tables import DeltaTable
from .write import DeltaWriter, WriteResult, create_table, write_delta

__all__ = [
    "CompactionResult",
    "DeltaTable",
    "DeltaWriter",
    "DmlResult",
    "MergeClause",
    "S3Endpoint",
    "TableFailure",
    "WriteResult",
    "compact",
    "compact_tables",
    "configure",
    "configure_s3",
    "create_table",
    "delete",
    "idempotent_writer",
    "local_session",
    "merge",
    "read_table",
    "register",
    "update",
    "write_delta",
]
