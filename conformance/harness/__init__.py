"""The neutral harness: vectors, the runner, the judge, verdicts, suites, the gate, reports and
known issues.

It judges any adapter and sees neither the model nor the impl (tests/tools/test_packaging.py)."""
