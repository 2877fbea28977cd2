"""Snapshots of the production log: the state of a table at one version, how a log loads it,
what it keeps between loads, and time travel.

- ``state``: :class:`~deltaspec.impl.snapshot.state.Snapshot`, the state at one version as a
  value (SNAPSHOT.*, RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION);
- ``delta_log``: :class:`~deltaspec.impl.snapshot.delta_log.DeltaLog`, the log of one table:
  listing, reading commits, loading a snapshot (CHECKPOINT.READ, SNAPSHOT.REPLAY,
  SNAPSHOT.RELIST);
- ``segment``: a log segment, the checkpoint and commits a snapshot is replayed from, as one
  listing shows them;
- ``cache``: what a log keeps between loads, and when the last snapshot is reused or refreshed;
- ``time_travel``: which version a load reads, by version or by timestamp
  (SNAPSHOT.TIME_TRAVEL);
- ``timestamps``: commit timestamps on the read side (ICT.TIME_TRAVEL);
- ``log_reader``: what those two readers need of a log (``LogReader``, which ``DeltaLog`` is).

Import the names from the module that defines them.
"""
