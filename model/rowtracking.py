"""Row tracking at commit: base row ids, default row commit versions and the row-id high-water
mark, assigned when a commit is prepared and reassigned when it is rebased over a winner
(ROWTRACKING.*, spec/row-tracking.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from deltaspec.rules import rule

from . import features
from .actions import Action, AddFile, DomainMetadata, Protocol
from .outcomes import ErrorKind
from .prepared_commit import PreparedCommit
from .profiles import Profile
from .snapshot import Snapshot
from .transaction_state import Transaction
from .winning_commit import WinningCommit

ROW_TRACKING_DOMAIN = "delta.rowTracking"
MISSING_HIGH_WATER_MARK = -1
Actions = tuple[Action, ...]


def tracks_rows(protocol: Protocol | None, profile: Profile) -> bool:
    """Row ids are assigned whenever the protocol supports ``rowTracking`` (whatever
    ``delta.enableRowTracking`` says), in releases that have row tracking."""
    return profile.has("row_tracking") and features.supports(protocol, "rowTracking")


def is_high_water_mark(action: Action) -> bool:
    return isinstance(action, DomainMetadata) and action.domain == ROW_TRACKING_DOMAIN


def domain_high_water_mark(domain: DomainMetadata) -> int:
    return int(json.loads(domain.configuration)["rowIdHighWaterMark"])


def high_water_mark_domain(mark: int) -> DomainMetadata:
    """The ``delta.rowTracking`` domain as delta-spark writes it (its name repeated inside)."""
    configuration = {"rowIdHighWaterMark": mark, "domainName": ROW_TRACKING_DOMAIN}
    return DomainMetadata(ROW_TRACKING_DOMAIN, json.dumps(configuration, separators=(",", ":")))


def high_water_mark(snapshot: Snapshot) -> int:
    """The snapshot's row-id high-water mark, -1 when no row id was ever assigned."""
    domain = snapshot.domains.get(ROW_TRACKING_DOMAIN)
    return MISSING_HIGH_WATER_MARK if domain is None else domain_high_water_mark(domain)


def num_records(add: AddFile) -> int | None:
    """``numRecords`` of the add's stats (physical rows, deleted ones included), if given."""
    if add.stats is None:
        return None
    value = json.loads(add.stats).get("numRecords")
    return None if value is None else int(value)


def _renumbered(
    actions: Actions, fresh: Callable[[AddFile], bool], mark: int
) -> tuple[Actions, int] | None:
    """The ``fresh`` adds numbered in order from ``mark`` + 1, and the mark after them; None if
    one of them has no ``numRecords``."""
    numbered: list[Action] = []
    for action in actions:
        if isinstance(action, AddFile) and fresh(action):
            records = num_records(action)
            if records is None:
                return None
            numbered.append(replace(action, base_row_id=mark + 1))
            mark += records
        else:
            numbered.append(action)
    return tuple(numbered), mark


def _committed_protocol(txn: Transaction, actions: Actions) -> Protocol | None:
    new = next((a for a in actions if isinstance(a, Protocol)), None)
    return new or txn.read_snapshot.protocol


@rule("ROWTRACKING.FRESH_ROW_IDS")
def assign_fresh_row_ids(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """Every add without ``baseRowId`` gets the read high-water mark + 1, in order, the mark
    advancing by its ``numRecords``; a mark that moved is committed in ``delta.rowTracking``."""
    if not tracks_rows(_committed_protocol(txn, actions), profile):
        return actions
    read_mark = high_water_mark(txn.read_snapshot)
    renumbered = _renumbered(actions, lambda a: a.base_row_id is None, read_mark)
    if renumbered is None:
        return ErrorKind.ROW_ID_ASSIGNMENT_WITHOUT_STATS
    numbered, mark = renumbered
    return numbered if mark == read_mark else (*numbered, high_water_mark_domain(mark))


@rule("ROWTRACKING.DEFAULT_ROW_COMMIT_VERSION")
def assign_default_row_commit_versions(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """Every add without ``defaultRowCommitVersion`` gets the first attempt's version."""
    if not tracks_rows(_committed_protocol(txn, actions), profile):
        return actions
    version = txn.read_version + 1
    return tuple(
        replace(a, default_row_commit_version=version)
        if isinstance(a, AddFile) and a.default_row_commit_version is None
        else a
        for a in actions
    )


@rule("ROWTRACKING.REBASE")
def reassign_row_tracking(
    current: PreparedCommit, winner: WinningCommit, profile: Profile
) -> PreparedCommit:
    """Rebased over a winner: the adds whose row ids this transaction assigned (none, or above
    the read high-water mark) are numbered again from the winner's mark, the high-water mark
    domain is replaced by the new mark (first among the actions), and default row commit versions
    that are the winner's version, or missing, become the winner's version + 1."""
    if not tracks_rows(current.protocol, profile):
        return current
    read_mark = current.row_id_high_water_mark
    marks = (a for a in winner.actions if isinstance(a, DomainMetadata) and is_high_water_mark(a))
    winner_mark = next((domain_high_water_mark(d) for d in marks), read_mark)
    kept = tuple(a for a in current.actions if not is_high_water_mark(a))
    renumbered = _renumbered(
        kept, lambda a: a.base_row_id is None or a.base_row_id > read_mark, winner_mark
    )
    if renumbered is None:  # not modelled: see ROWTRACKING.REBASE
        return current
    numbered, mark = renumbered
    next_version = winner.version + 1
    versioned = tuple(
        replace(a, default_row_commit_version=next_version)
        if isinstance(a, AddFile) and a.default_row_commit_version in (None, winner.version)
        else a
        for a in numbered
    )
    return replace(
        current,
        actions=(high_water_mark_domain(mark), *versioned),
        row_id_high_water_mark=winner_mark,
    )
