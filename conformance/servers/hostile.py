"""Hostile inputs for tables on object stores and local files, one list each, shared by the tests
and the services stage of ``deltaspec check`` (PATH.TABLE_LOCATION, PATH.STRAY_KEYS)."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "HOSTILE_LOCATIONS",
    "LOCAL_STRAY_NAMES",
    "STRAY_KEYS",
    "hostile_urls",
    "plant_local_strays",
]

HOSTILE_LOCATIONS = (
    "mine/../{table}",
    "mine/%2e%2e/{table}",
    "mine/%2E%2E/{table}",
    "mine%2F..%2F{table}",
    "mine/./../{table}",
    "{table}/.",
    "{table}/%2e",
    "./{table}",
    "{table}//",
    "mine//{table}",
    "/{table}",
    "{table}/sub/..",
    "{table}/%2e%2e/{table}",
    "{table}%00",
    "{table}/%zz",
    "{table}?x=1",
)
"""Table URLs below a bucket that some client resolves to ``{table}`` or a neighbour of it (or
that name no key prefix at all): each must be refused before any request."""

STRAY_KEYS = (
    "_delta_log/../00000000000000000004.json",
    "_delta_log//00000000000000000004.json",
    "_delta_log/./00000000000000000001.json",
    "_delta_log/00000000000000000003.json/../x",
    "_delta_log/_sidecars/../y.parquet",
    "_delta_log/00000000000000000004.JSON",
    "_delta_log/0000000000000000004.json",
    "_delta_log/notes.txt",
    "p=1/../stray.parquet",
    "p=1//stray.parquet",
)
"""Keys below a table root that no log or data file could have: listings ignore them."""

LOCAL_STRAY_NAMES = (
    "00000000000000000004.JSON",
    "0000000000000000004.json",
    "notes.txt",
    " 00000000000000000001.json",
    "sub/00000000000000000004.json",
)
"""Names in a local ``_delta_log`` that are no log file name (``sub/`` is a directory)."""


def hostile_urls(bucket_url: str, table: str) -> list[str]:
    """Every hostile location aimed at ``table`` (a key prefix) of the bucket at
    ``bucket_url``."""
    return [f"{bucket_url}/{pattern.format(table=table)}" for pattern in HOSTILE_LOCATIONS]


def plant_local_strays(log_dir: Path) -> list[Path]:
    """Write every :data:`LOCAL_STRAY_NAMES` file into ``log_dir``; their paths."""
    planted = []
    for name in LOCAL_STRAY_NAMES:
        path = log_dir / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x")
        planted.append(path)
    return planted
