"""The model (deltaspec.model) under test: its adapter (the state machine) and its reader of tables
on disk."""
