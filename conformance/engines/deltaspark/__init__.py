"""Live delta-spark in process: its session, JVM helpers, adapters (action and operation level),
hand-driven losing transaction, reader and Spark API; the one place that imports ``delta``."""
