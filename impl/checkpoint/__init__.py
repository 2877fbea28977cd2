"""Checkpoints: their contents, writing them (classic, multi-part, v2) and when (CHECKPOINT.*)."""
