"""User tools over real tables (``deltaspec inspect``)."""
