"""Azurite, Microsoft's Azure Storage emulator (from npm), serving Blob Storage on loopback.

Installed on first use with npm into the cache (``~/.cache/deltaspec/servers/azurite-<v>``,
outside the clone), then started in memory on a free port with the emulator's well-known
account. One container, :data:`CONTAINER`, is created at start with a Shared Key signed request.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import hmac
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from email.utils import formatdate
from pathlib import Path
from urllib.parse import urlencode

from ..releases.cache import cache_root
from .process import ServerFailedError, free_port, running

__all__ = [
    "AZURITE_VERSION",
    "CONTAINER",
    "azurite_server",
    "install_azurite",
    "shared_key_request",
]

AZURITE_VERSION = "3.37.0"
CONTAINER = "deltaspec"
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
"""The emulator's published development account and key (not a secret)."""
API_VERSION = "2021-08-06"


def install_azurite() -> Path:
    """The ``azurite-blob`` program, installed with npm into the cache on first use."""
    home = cache_root() / "servers" / f"azurite-{AZURITE_VERSION}"
    program = home / "node_modules" / ".bin" / "azurite-blob"
    if program.exists():
        return program
    npm = shutil.which("npm")
    if npm is None:
        raise ServerFailedError("Azurite is installed with npm, which is not on PATH")
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install when test workers start at once
        if not program.exists():
            subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(home),
                 f"azurite@{AZURITE_VERSION}"],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600,
            )  # fmt: skip
    return program


def _create_container(endpoint: str) -> None:
    """PUT the container, signed with Shared Key as Blob Storage requires."""
    shared_key_request(endpoint, "PUT", CONTAINER, {"restype": "container"})


def shared_key_request(
    endpoint: str,
    method: str,
    path: str,
    query: Mapping[str, str] | None = None,
    body: bytes = b"",
    headers: Mapping[str, str] | None = None,
) -> bytes:
    """One Blob Storage request on the emulator's account, signed with Shared Key; ``path``
    (``container/blob``) is sent as given, already percent-encoded where it must be. Returns
    the answer's body; an HTTPError for a refusal."""
    sent = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": API_VERSION, **(headers or {})}
    canonical_headers = "".join(
        f"{k}:{v}\n" for k, v in sorted(sent.items()) if k.startswith("x-ms-")
    )
    # path-style emulator URLs carry the account twice in the canonical resource
    resource = f"/{ACCOUNT}/{ACCOUNT}/{path}" + "".join(
        f"\n{k}:{v}" for k, v in sorted((query or {}).items())
    )
    content_type = "application/octet-stream"  # urllib would send its own, unsigned
    length = str(len(body)) if body else ""
    to_sign = (
        f"{method}\n\n\n{length}\n\n{content_type}\n" + "\n" * 6 + canonical_headers + resource
    )
    key = base64.b64decode(ACCOUNT_KEY)
    signature = base64.b64encode(hmac.new(key, to_sign.encode(), hashlib.sha256).digest())
    sent["Authorization"] = f"SharedKey {ACCOUNT}:{signature.decode()}"
    sent["Content-Type"] = content_type
    url = f"{endpoint}/{path}" + (f"?{urlencode(query)}" if query else "")
    request = urllib.request.Request(url, method=method, headers=sent, data=body)
    with urllib.request.urlopen(request, timeout=10) as answer:
        data: bytes = answer.read()
    return data


@contextmanager
def azurite_server() -> Iterator[dict[str, str]]:
    """Start Azurite's Blob service; yields the obstore/delta-rs storage options that reach it."""
    program = install_azurite()
    port = free_port()
    command = [
        str(program), "--inMemoryPersistence", "--blobHost", "127.0.0.1",
        "--blobPort", str(port), "--skipApiVersionCheck", "--silent",
    ]  # fmt: skip
    with running("azurite", command, port):
        endpoint = f"http://127.0.0.1:{port}/{ACCOUNT}"
        _create_container(endpoint)
        yield {
            "account_name": ACCOUNT,
            "account_key": ACCOUNT_KEY,
            "endpoint": endpoint,
            "allow_http": "true",
        }
