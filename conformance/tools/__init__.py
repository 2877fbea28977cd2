"""User tools: ``deltaspec inspect`` over real tables, and verified_live.py (which rules pass on
live delta-spark, written to spec/data/verified_live.json)."""
