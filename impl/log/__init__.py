"""The log on storage: the put-if-absent log store, injected faults and crash points (LOG.*)."""
