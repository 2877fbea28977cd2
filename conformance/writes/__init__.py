"""The writes suite: what our Spark path (spark) writes, compared with what delta-spark
wrote for the same operations, recorded in the fixtures (suite.py) or live (live.py).

An engine against an engine, not an adapter judged by vectors: it drives the impl and delta-spark
directly, so it lives beside the neutral harness and uses only its verdicts and known issues."""
