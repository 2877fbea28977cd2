"""Benchmarks: measured numbers with the commands that reproduce them (see benchmarks/README.md)."""
