"""The PySpark write path: delta-spark's Python API (``DeltaTable``, ``format("deltaspec")``)
over DataFrame writes, DML, compaction and reads on Spark, committed through deltaspec's own log
(deltaspec.impl.txn.transaction). See README "Writing with Spark"."""

from deltaspec.impl.spark.compaction import CompactionResult, TableFailure, compact, compact_tables
from deltaspec.impl.spark.dml import DmlResult, MergeClause, delete, merge, update
from deltaspec.impl.spark.read import read_table
from deltaspec.impl.spark.session import local_session
from deltaspec.impl.spark.streaming import idempotent_writer
from deltaspec.impl.spark.tables import DeltaTable
from deltaspec.impl.spark.write import DeltaWriter, WriteResult, create_table, write_delta

__all__ = [
    "CompactionResult",
    "DeltaTable",
    "DeltaWriter",
    "DmlResult",
    "MergeClause",
    "TableFailure",
    "WriteResult",
    "compact",
    "compact_tables",
    "create_table",
    "delete",
    "idempotent_writer",
    "local_session",
    "merge",
    "read_table",
    "update",
    "write_delta",
]
