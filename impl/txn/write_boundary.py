"""The write boundary: a commit never contains what this implementation's own reader refuses
(TXN.WRITE_BOUNDARY).

:func:`check_commit` runs once per commit, on the bytes about to be written: it decodes them with
the reader's codec and applies the reader's checks to every action (the one path rule of
PATH.DATA_FILE, sizes and times inside int64, the reader protocol), then the writer's own: the
metadata's ``delta.*`` properties must be valid (TXN.TABLE_PROPERTIES); which protocols the
writer takes is TXN.WRITER_PROTOCOL, a prepare rule. Anything else is a
typed :class:`~deltaspec.impl.errors.CommitValidationError` and nothing is written. Because the
check is the reader itself, a commit the writer lets through is one the reader can load.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from deltaspec.rules import rule

from .. import codec
from ..actions import Action, AddFile, Metadata, Protocol, RemoveFile
from ..errors import (
    CorruptLogError,
    InvalidCommitActionError,
    UnsupportedProtocolError,
)
from ..log.names import commit_name
from ..table import paths, properties
from ..table.features import check_reader_protocol

__all__ = [
    "check_commit",
    "commit_bytes",
    "encode_line",
]


@contextmanager
def _writable(table: str, version: int) -> Iterator[None]:
    """A value that cannot be written at all (a lone surrogate, a non-JSON type) becomes
    InvalidCommitActionError instead of a raw Python error."""
    try:
        yield
    except (TypeError, ValueError, OverflowError, UnicodeError, RecursionError) as exc:
        raise InvalidCommitActionError(
            f"an action cannot be written: {type(exc).__name__}: {str(exc)[:300]}",
            table=table,
            version=version,
        ) from None


def encode_line(action: Action, *, table: str, version: int) -> str:
    """The action's log line (codec.encode_action), or InvalidCommitActionError."""
    with _writable(table, version):
        return codec.encode_action(action)


def commit_bytes(lines: Sequence[str], *, table: str, version: int) -> bytes:
    """The commit's bytes of encoded ``lines`` (codec.commit_bytes), or InvalidCommitActionError
    (a lone surrogate cannot be UTF-8)."""
    with _writable(table, version):
        return codec.commit_bytes(lines)


@rule("TXN.WRITE_BOUNDARY")
def check_commit(payload: bytes, *, table: str, version: int) -> list[Action]:
    """Read ``payload`` back as the reader would and refuse it if the reader would
    (TXN.WRITE_BOUNDARY); returns the decoded actions."""
    try:
        name = commit_name(version)
        actions = codec.decode_commit(payload, table=table, version=version, file=name)
        for action in actions:
            if isinstance(action, AddFile | RemoveFile):
                paths.check_file_action(action, table, version, name)
            elif isinstance(action, Protocol):
                check_reader_protocol(action, table=table, version=version)
    except (CorruptLogError, UnsupportedProtocolError) as refused:
        raise InvalidCommitActionError(
            f"the reader would refuse this commit: {refused.message}", table=table, version=version
        ) from None
    for action in actions:
        if isinstance(action, Metadata):
            properties.validate(action.configuration, table=table, version=version)
    return actions
