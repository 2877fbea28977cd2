"""The Spark path differential: the same PySpark user scripts run against live delta-spark
(``format("delta")``, ``delta.tables.DeltaTable``) and against deltaspec's Spark path
(``format("deltaspec")``, ``deltaspec.spark.tables.DeltaTable``), on one session; the two engines
and delta-spark's hand-driven loser live in ``conformance/engines`` (the shared ``spark_api``,
each engine's ``spark_api``, ``deltaspark/loser``); only ``engines/deltaspark`` drives delta-spark.

Each script runs once per engine into its own table; then the rows (each engine reading its own
table *and* the other's), the log's shape per version (operation, parameters with expression ids
stripped, the kinds of actions with their dataChange flags and partition values, the blind-append
flag) and the commitInfo metric names are compared (``compare``). Interleaved operations
(``conflicts``) race our operation with ``withCommitHook`` and delta-spark's through a hand-driven
transaction recording the same reads, and compare the outcomes.

Used by tests/spark/test_spark_facade_differential.py and by the ``spark`` stage of
``deltaspec check`` (conformance/oracle/stages.py). Needs pyspark and delta-spark.
"""
