"""Bounded exhaustive exploration of interleavings over the model (``deltaspec explore``)."""
