"""The impl as a reader of tables on disk (the fixtures suite): ``DeltaLog`` snapshots and the
reference Arrow scan; a refusal is the harness's ``ReadFailure`` with the impl error's kind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from ....impl.errors import DeltaError
from ....impl.log.local_store import LocalLogStore
from ....impl.log.store import FileInfo
from ....impl.retention.log_cleanup import cleanup_expired_logs
from ....impl.scan import scan
from ....impl.snapshot.delta_log import DeltaLog
from ....impl.snapshot.time_travel import version_at
from ...harness.adapter import Json
from ...harness.reading import ReadFailure
from .adapter import snapshot_json


class ImplReader:
    """deltaspec.impl: DeltaLog snapshots and the reference Arrow scan."""

    name = "impl"

    def read(self, root: Path, version: int | None) -> Json:
        try:
            return snapshot_json(DeltaLog(str(root)).snapshot(version))
        except DeltaError as error:
            raise ReadFailure(error.kind, str(error)) from error

    def read_at_timestamp(self, root: Path, timestamp: int) -> Json:
        try:
            log = DeltaLog(str(root))
            return snapshot_json(log.snapshot(version_at(log, timestamp)))
        except DeltaError as error:
            raise ReadFailure(error.kind, str(error)) from error

    def rows(self, root: Path, version: int | None) -> pa.Table:
        try:
            return scan(DeltaLog(str(root)).snapshot(version), root)
        except DeltaError as error:
            raise ReadFailure(error.kind, str(error)) from error

    def clean_up_expired_logs(self, root: Path) -> None:
        """The impl's log cleanup (RETENTION.LOG, RETENTION.VERIFIED_CHECKPOINT) as a writer runs
        it after writing the checkpoint ``_last_checkpoint`` names, with the wall clock."""
        try:
            log = DeltaLog(str(root))
            hint = log.read_last_checkpoint()
            if hint is not None:
                latest = log.snapshot()
                cleanup_expired_logs(
                    log, int(hint["version"]), log.clock(), latest.metadata, latest.protocol
                )
        except DeltaError as error:
            raise ReadFailure(error.kind, str(error)) from error

    def read_interleaved(
        self, root: Path, version: int | None, after_listing: Callable[[], None]
    ) -> Json:
        """A load whose first listing of ``_delta_log`` is followed by ``after_listing``
        (SNAPSHOT.RELIST), through the store's listing seam."""
        try:
            log = DeltaLog(str(root), store=_ListingHook(root, after_listing))
            return snapshot_json(log.snapshot(version))
        except DeltaError as error:
            raise ReadFailure(error.kind, str(error)) from error


class _ListingHook(LocalLogStore):
    """A local store that calls ``after_listing`` once, right after its first listing."""

    def __init__(self, root: Path, after_listing: Callable[[], None]) -> None:
        super().__init__(root)
        self._after_listing: Callable[[], None] | None = after_listing

    def list_from(self, start: str = "") -> list[FileInfo]:
        listed = super().list_from(start)
        hook, self._after_listing = self._after_listing, None
        if hook is not None:
            hook()
        return listed
