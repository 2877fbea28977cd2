"""The production implementation of the Delta log."""
