"""What a writer does: the operation alphabet, and its translation into engine operations."""
