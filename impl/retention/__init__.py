"""Retention: what the table deletes once it is no longer needed: expired log files, VACUUM."""
