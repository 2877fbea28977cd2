"""The Spark path differential: the same PySpark user scripts run against live delta-spark
(``format("delta")``, ``delta.tables.DeltaTable``) and against deltaspec's Spark path
(``format("deltaspec")``, ``deltaspec.spark.tables.DeltaTable``), on one session; the two engines
and delta-spark's hand-driven loser live in ``conformance/engines`` (the shared ``spark_api``,
each engine's ``spark_api``, ``deltaspark/loser``); only ``engines/deltaspark`` drives delta-spark.

Each script runs once per engine into its own table (some under other session settings, set
for the script and put back after: ``scripts.session_conf``); then the rows (each engine reading
its own table *and* the other's), what the script observed and every commit of every table it
left are compared (``compare``): each action with what legitimately differs between two writers
taken out (``commits``: file names, sizes, times, ids), so file actions with their statistics and
deletion vectors, tombstones, metaData, protocol and commitInfo with its parameters and metric
values. Interleaved operations
(``conflicts``) race our operation with ``withCommitHook`` and delta-spark's through a hand-driven
transaction recording the same reads, and compare the outcomes.

Used by tests/spark/test_spark_facade_differential.py and by the ``spark`` stage of
``deltaspec check`` (conformance/oracle/stages.py). Needs pyspark and delta-spark.
"""
