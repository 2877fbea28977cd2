"""Row tracking on the production commit path (ROWTRACKING.*, spec/row-tracking.md): base row
ids and default row commit versions for new files, the ``delta.rowTracking`` high-water mark,
and their reassignment when the commit is rebased over a winner.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace

from deltaspec.rules import rule

from .. import errors
from ..actions import Action, AddFile, DomainMetadata, Protocol
from ..snapshot.state import Snapshot
from ..table import features as protocol_features
from ..table.releases import Profile
from .current_transaction import CurrentTransactionInfo
from .preparing import Preparing
from .winning_commit import WinningCommit

ROW_TRACKING_DOMAIN = "delta.rowTracking"
MISSING_HIGH_WATER_MARK = -1


def tracks_rows(protocol: Protocol | None, profile: Profile) -> bool:
    """Row ids are assigned whenever the protocol supports ``rowTracking``."""
    return profile.has("row_tracking") and "rowTracking" in protocol_features.features(protocol)


def _is_mark(action: Action) -> bool:
    return isinstance(action, DomainMetadata) and action.domain == ROW_TRACKING_DOMAIN


def _mark_of(domain: DomainMetadata) -> int:
    return int(json.loads(domain.configuration)["rowIdHighWaterMark"])


def _mark_domain(mark: int) -> DomainMetadata:
    """The ``delta.rowTracking`` domain as delta-spark writes it (its name repeated inside)."""
    configuration = f'{{"rowIdHighWaterMark":{mark},"domainName":"{ROW_TRACKING_DOMAIN}"}}'
    return DomainMetadata(ROW_TRACKING_DOMAIN, configuration, False)


def high_water_mark(snapshot: Snapshot | None) -> int:
    """The snapshot's row-id high-water mark; -1 when none was ever committed."""
    domain = None if snapshot is None else snapshot.domains.get(ROW_TRACKING_DOMAIN)
    return MISSING_HIGH_WATER_MARK if domain is None else _mark_of(domain)


def _num_records(add: AddFile) -> int | None:
    value = None if add.stats is None else json.loads(add.stats).get("numRecords")
    return None if value is None else int(value)


def _renumber(
    actions: Sequence[Action], fresh: Callable[[AddFile], bool], mark: int
) -> tuple[list[Action], int] | None:
    """Number the ``fresh`` adds in order from ``mark`` + 1: (actions, new mark), or None when a
    fresh add has no ``numRecords``."""
    out: list[Action] = []
    for action in actions:
        if isinstance(action, AddFile) and fresh(action):
            records = _num_records(action)
            if records is None:
                return None
            out.append(replace(action, base_row_id=mark + 1))
            mark += records
        else:
            out.append(action)
    return out, mark


def _committed_protocol(txn: Preparing, actions: Sequence[Action]) -> Protocol | None:
    new = next((a for a in actions if isinstance(a, Protocol)), None)
    return new or txn.read_protocol


@rule("ROWTRACKING.FRESH_ROW_IDS")
def assign_fresh_row_ids(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    """Adds without ``baseRowId`` numbered from the read high-water mark + 1; a moved mark is
    committed in the ``delta.rowTracking`` domain."""
    if not tracks_rows(_committed_protocol(txn, actions), profile):
        return actions
    read_mark = high_water_mark(txn.snapshot)
    renumbered = _renumber(actions, lambda a: a.base_row_id is None, read_mark)
    if renumbered is None:
        raise txn.invalid(
            errors.RowIdAssignmentWithoutStatsError,
            "a file needs row ids but its stats have no numRecords",
        )
    numbered, mark = renumbered
    return numbered if mark == read_mark else [*numbered, _mark_domain(mark)]


@rule("ROWTRACKING.DEFAULT_ROW_COMMIT_VERSION")
def assign_default_row_commit_versions(
    txn: Preparing, actions: list[Action], profile: Profile
) -> list[Action]:
    """Adds without ``defaultRowCommitVersion`` get the first attempt's version."""
    if not tracks_rows(_committed_protocol(txn, actions), profile):
        return actions
    return [
        replace(a, default_row_commit_version=txn.version)
        if isinstance(a, AddFile) and a.default_row_commit_version is None
        else a
        for a in actions
    ]


@rule("ROWTRACKING.REBASE")
def reassign_row_tracking(
    current: CurrentTransactionInfo, winner: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """Over a winner: this transaction's row ids (missing or above the read mark) renumbered from
    the winner's mark, the mark domain replaced (first), default row commit versions that are the
    winner's version or missing set to the winner's version + 1."""
    if not tracks_rows(current.protocol, profile):
        return current
    read_mark = current.row_id_high_water_mark
    marks = (a for a in winner.actions if isinstance(a, DomainMetadata) and _is_mark(a))
    winner_mark = next((_mark_of(d) for d in marks), read_mark)
    kept = [a for a in current.actions if not _is_mark(a)]
    renumbered = _renumber(
        kept, lambda a: a.base_row_id is None or a.base_row_id > read_mark, winner_mark
    )
    if renumbered is None:
        return current
    numbered, mark = renumbered
    following = winner.version + 1
    versioned = [
        replace(a, default_row_commit_version=following)
        if isinstance(a, AddFile) and a.default_row_commit_version in (None, winner.version)
        else a
        for a in numbered
    ]
    return replace(
        current,
        actions=(_mark_domain(mark), *versioned),
        row_id_high_water_mark=winner_mark,
    )
