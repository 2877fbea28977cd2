"""Listing keys as the server names them, for the one case obstore cannot list (LOG.LISTING).

obstore (the Rust ``object_store``) parses every listed key into its ``Path``, which refuses empty,
``.`` and ``..`` segments; one such key under a prefix (``_delta_log/../00…04.json``,
``_delta_log//00…04.json``: legal keys on S3 and Blob Storage) fails the whole listing, so a single
stray object would make a table unreadable and unwritable. When that happens
:class:`~deltaspec.impl.log.object_store.ObjectLogStore` lists the prefix again here: one signed
``ListObjectsV2`` (S3, Signature Version 4) or ``List Blobs`` (Azure, Shared Key) request per page,
keys kept byte for byte, for the caller to ignore what is no log name (PATH.STRAY_KEYS).

Only static credentials sign here (an access key and secret, with a session token where given; an
Azure account key), from the store's options or the same environment variables obstore reads.
Other credentials (instance roles, SSO, managed identities) raise
:class:`KeyListingUnavailable`, and the store reports the stray key instead of listing past it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import formatdate, parsedate_to_datetime
from urllib.parse import quote, urlsplit

__all__ = ["KeyListingUnavailable", "ListedKey", "list_keys"]

_PAGE_LIMIT = 10_000
"""The most pages one listing follows (10 million keys): a server that never ends its listing is
an error, not a hang."""
_AZURE_API = "2021-08-06"


class KeyListingUnavailable(Exception):
    """The store's credentials or URL cannot be used for a listing here (say why)."""


@dataclass(frozen=True, slots=True)
class ListedKey:
    """One listed object: its whole key, size and last modification (ms since the epoch)."""

    key: str
    size: int
    modified_ms: int


def list_keys(
    scheme: str, config: Mapping[str, str], prefix: str, timeout_s: float
) -> list[ListedKey]:
    """Every key under ``prefix`` (a plain string prefix) of the bucket or container ``config``
    names, sorted; ``scheme`` is obstore's (``s3``, ``az``, …). KeyListingUnavailable where this
    module cannot list that store; OSError (urllib's) when the server fails."""
    if scheme == "s3":
        pages = _s3_pages(_S3Credentials.of(config), prefix, timeout_s)
    elif scheme in ("az", "azure", "abfs", "abfss", "adl"):
        pages = _azure_pages(_AzureCredentials.of(config), prefix, timeout_s)
    else:
        raise KeyListingUnavailable(f"no listing of {scheme}:// keys outside obstore")
    keys: list[ListedKey] = []
    marker: str | None = None
    for _ in range(_PAGE_LIMIT):
        page, marker = pages(marker)
        keys.extend(page)
        if not marker:
            return sorted(keys, key=lambda k: k.key)
    raise OSError(f"the listing of {prefix!r} did not end after {_PAGE_LIMIT} pages")


def _setting(config: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = config.get(name) or config.get(name.upper()) or os.environ.get(name.upper())
        if value:
            return value
    return None


def _get(url: str, headers: Mapping[str, str], timeout_s: float) -> ET.Element:
    request = urllib.request.Request(url, headers=dict(headers), method="GET")
    with urllib.request.urlopen(request, timeout=timeout_s) as answer:
        return ET.fromstring(answer.read())


# --- S3: ListObjectsV2, Signature Version 4 --------------------------------------------------


@dataclass(frozen=True)
class _S3Credentials:
    bucket: str
    base: str  # scheme://host[/bucket] the request path starts from
    host: str
    path: str
    region: str
    key_id: str
    secret: str
    token: str | None

    @classmethod
    def of(cls, config: Mapping[str, str]) -> _S3Credentials:
        bucket = _setting(config, "bucket") or ""
        key_id = _setting(config, "access_key_id", "aws_access_key_id")
        secret = _setting(config, "secret_access_key", "aws_secret_access_key")
        if not bucket or not key_id or not secret:
            raise KeyListingUnavailable("S3 listing here signs with an access key and secret only")
        region = _setting(config, "region", "aws_region", "aws_default_region") or "us-east-1"
        endpoint = _setting(config, "endpoint", "aws_endpoint", "aws_endpoint_url")
        virtual = (_setting(config, "virtual_hosted_style_request") or "").lower() == "true"
        if endpoint and not virtual:
            parts = urlsplit(endpoint.rstrip("/"))
            host, path = parts.netloc, f"{parts.path}/{bucket}"
            base = f"{parts.scheme}://{host}"
        elif endpoint:
            parts = urlsplit(endpoint.rstrip("/"))
            host, path = f"{bucket}.{parts.netloc}", "/"
            base = f"{parts.scheme}://{host}"
        else:
            host, path = f"{bucket}.s3.{region}.amazonaws.com", "/"
            base = f"https://{host}"
        token = _setting(config, "session_token", "token", "aws_session_token")
        return cls(bucket, base, host, path, region, key_id, secret, token)


def _s3_pages(
    creds: _S3Credentials, prefix: str, timeout_s: float
) -> Callable[[str | None], tuple[list[ListedKey], str | None]]:
    def page(marker: str | None) -> tuple[list[ListedKey], str | None]:
        query = {"list-type": "2", "prefix": prefix}
        if marker:
            query["continuation-token"] = marker
        headers = s3_signed_headers(creds, "GET", query, datetime.now(UTC))
        canonical = _s3_query(query)
        root = _get(f"{creds.base}{quote(creds.path)}?{canonical}", headers, timeout_s)
        ns = {"s3": root.tag[1:].split("}")[0]} if root.tag.startswith("{") else {}
        tag = "s3:" if ns else ""
        keys = [
            ListedKey(
                _text(item, f"{tag}Key", ns),
                int(_text(item, f"{tag}Size", ns)),
                _iso_ms(_text(item, f"{tag}LastModified", ns)),
            )
            for item in root.findall(f"{tag}Contents", ns)
        ]
        truncated = (root.findtext(f"{tag}IsTruncated", "false", ns) or "").lower() == "true"
        return keys, root.findtext(f"{tag}NextContinuationToken", None, ns) if truncated else None

    return page


def _s3_query(query: Mapping[str, str]) -> str:
    return "&".join(
        f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(query.items())
    )


def s3_signed_headers(
    creds: _S3Credentials, method: str, query: Mapping[str, str], now: datetime
) -> dict[str, str]:
    """The headers of a Signature Version 4 request without a body (``Authorization`` and
    what it signs)."""
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload = hashlib.sha256(b"").hexdigest()
    headers = {"host": creds.host, "x-amz-content-sha256": payload, "x-amz-date": stamp}
    if creds.token:
        headers["x-amz-security-token"] = creds.token
    signed = ";".join(sorted(headers))
    canonical = "\n".join(
        [
            method,
            quote(creds.path, safe="/-_.~"),
            _s3_query(query),
            "".join(f"{k}:{headers[k].strip()}\n" for k in sorted(headers)),
            signed,
            payload,
        ]
    )
    scope = f"{day}/{creds.region}/s3/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = f"AWS4{creds.secret}".encode()
    for part in (day, creds.region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={creds.key_id}/{scope}, "
        f"SignedHeaders={signed}, Signature={signature}"
    )
    return headers


# --- Azure: List Blobs, Shared Key -----------------------------------------------------------


@dataclass(frozen=True)
class _AzureCredentials:
    account: str
    key: bytes
    container: str
    base: str  # scheme://host[/account]: the container's URL is base/container
    resource_root: str  # /account[/account] of the canonical resource

    @classmethod
    def of(cls, config: Mapping[str, str]) -> _AzureCredentials:
        account = _setting(config, "account_name", "azure_storage_account_name")
        key = _setting(config, "account_key", "azure_storage_account_key", "access_key")
        container = _setting(config, "container_name") or ""
        if not account or not key or not container:
            raise KeyListingUnavailable("Azure listing here signs with an account key only")
        endpoint = _setting(config, "endpoint", "azure_storage_endpoint")
        base = (endpoint or f"https://{account}.blob.core.windows.net").rstrip("/")
        path = urlsplit(base).path  # an emulator's path-style URL carries the account
        return cls(account, base64.b64decode(key), container, base, f"/{account}{path}")


def _azure_pages(
    creds: _AzureCredentials, prefix: str, timeout_s: float
) -> Callable[[str | None], tuple[list[ListedKey], str | None]]:
    def page(marker: str | None) -> tuple[list[ListedKey], str | None]:
        query = {"restype": "container", "comp": "list", "prefix": prefix}
        if marker:
            query["marker"] = marker
        headers = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": _AZURE_API}
        resource = f"{creds.resource_root}/{creds.container}" + "".join(
            f"\n{k}:{v}" for k, v in sorted(query.items())
        )
        to_sign = (
            "GET\n"
            + "\n" * 11
            + "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
            + resource
        )
        digest = hmac.new(creds.key, to_sign.encode(), hashlib.sha256).digest()
        headers["Authorization"] = f"SharedKey {creds.account}:{base64.b64encode(digest).decode()}"
        url = f"{creds.base}/{creds.container}?" + "&".join(
            f"{k}={quote(v, safe='')}" for k, v in query.items()
        )
        root = _get(url, headers, timeout_s)
        keys = [
            ListedKey(
                _text(blob, "Name"),
                int(_text(blob, "Properties/Content-Length")),
                int(parsedate_to_datetime(_text(blob, "Properties/Last-Modified")).timestamp())
                * 1000,
            )
            for blob in root.iterfind("Blobs/Blob")
        ]
        return keys, root.findtext("NextMarker") or None

    return page


def _text(element: ET.Element, path: str, ns: dict[str, str] | None = None) -> str:
    found: str | None = element.findtext(path, None, ns or {})
    if found is None:
        raise OSError(f"a listing entry without {path}")
    return found


def _iso_ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
