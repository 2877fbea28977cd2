"""The production implementation of the Delta log. Never imports ``deltaspec.model``."""
