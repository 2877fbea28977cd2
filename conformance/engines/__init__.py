"""Adapters over the scenario format: the only place allowed to import both model and impl."""
