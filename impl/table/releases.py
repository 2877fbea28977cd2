"""Which delta-spark release's commit rules the production path follows (spec/README.md profiles).

Each behaviour is keyed by the first release that has it; ``Release.has`` answers
"does the configured release have behaviour X".
"""

from __future__ import annotations

from dataclasses import dataclass

CURRENT = "4.4.0"

INTRODUCED: dict[str, tuple[int, int, int]] = {
    "retries": (0, 2, 0),  # RETRY.NONE_V01
    "blind_append_flag": (0, 2, 0),  # TXN.BLIND_APPEND
    "fine_grained_conflicts": (0, 5, 0),  # CONFLICT.ORDER_V05 replaces CONFLICT.LEGACY_WRITE
    "metadata_validation": (0, 7, 0),  # TXN.FIRST_COMMIT, TXN.PARTITION_COLUMNS
    "bounded_retries": (0, 8, 0),  # RETRY.MAX_ATTEMPTS
    "whole_table_delete_read": (0, 8, 0),  # CONFLICT.DELETE_READ_WHOLE_TABLE
    "downgrade_check": (0, 8, 0),  # TXN.PROTOCOL_DOWNGRADE
    "isolation_level_recorded": (1, 1, 0),  # ISOLATION.RECORDED
    "commit_info_last": (1, 1, 0),  # TXN.COMMIT_INFO (until 2.2.0)
    "downgrade_v12": (1, 2, 0),  # ISOLATION.DOWNGRADE
    "txn_id": (1, 2, 0),  # TXN.COMMIT_INFO
    "isolation_property": (2, 1, 0),  # ISOLATION.TABLE_DEFAULT
    "read_time_partition_schema": (2, 1, 0),  # PREDICATE.TYPING
    "set_transaction_dedup": (2, 1, 0),  # TXN.SET_TRANSACTION_DEDUP
    "commit_info_first_again": (2, 2, 0),
    "skip_empty_commits": (2, 3, 0),  # TXN.EMPTY_COMMIT
    "single_protocol": (2, 3, 0),  # TXN.SINGLE_PROTOCOL
    "domain_metadata": (3, 0, 0),  # CONFLICT.DOMAIN
    "feature_protocols": (3, 0, 0),  # CONFLICT.PROTOCOL, TXN.PROTOCOL_DOWNGRADE
    "append_shortcuts": (3, 1, 0),  # CONFLICT.APPEND_SHORTCUTS
    "cheap_checks_first": (3, 2, 0),  # CONFLICT.ORDER_V32
    "metadata_resolution": (4, 1, 0),  # CONFLICT.METADATA_RESOLUTION
    "more_resolvable_keys": (4, 3, 0),
    "duplicate_action_check": (4, 3, 0),  # TXN.DUPLICATE_ACTIONS
}


@dataclass(frozen=True)
class Release:
    """A delta-spark release number plus the session confs that shape committing."""

    number: tuple[int, int, int] = (4, 4, 0)
    max_commit_attempts: int = 10_000_000
    skip_recording_empty_commits: bool = True

    @classmethod
    def parse(cls, text: str = CURRENT, **confs: int | bool) -> Release:
        major, minor, patch = (int(p) for p in text.split("."))
        return cls((major, minor, patch), **confs)  # type: ignore[arg-type]

    def has(self, behaviour: str) -> bool:
        return self.number >= INTRODUCED[behaviour]

    @property
    def commit_info_written_last(self) -> bool:
        return self.has("commit_info_last") and not self.has("commit_info_first_again")

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.number)
