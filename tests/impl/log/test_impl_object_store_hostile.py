"""Hostile inputs and faults against tables on object stores, on real servers on loopback (moto's
S3 server and Azurite, each a separate OS process), with a fault-injecting proxy in front where a
fault is needed:

- a table URL with ``..``, ``%2e%2e``, ``//`` or a dot segment is refused and never writes into
  the neighbouring table (PATH.TABLE_LOCATION): the bucket is byte-identical afterwards;
- stray objects under the table that no client can name (``_delta_log/../…``, ``_delta_log//…``)
  stop neither load, append nor VACUUM (PATH.STRAY_KEYS); the same for local tables;
- a commit PUT the server stores only after the client gave up is never reported as failed: the
  writer returns its version or CommitOutcomeUnknownError (RETRY.OUTCOME_UNKNOWN).
"""

from __future__ import annotations

import hashlib
import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pytest

from deltaspec.conformance.servers.azurite import CONTAINER, shared_key_request
from deltaspec.conformance.servers.fault_proxy import fault_proxy
from deltaspec.conformance.servers.hostile import STRAY_KEYS, hostile_urls, plant_local_strays
from deltaspec.conformance.servers.serving import ObjectStoreServer, serving
from deltaspec.impl.actions import AddFile, Metadata, Protocol
from deltaspec.impl.errors import CommitOutcomeUnknownError, InvalidTableLocationError
from deltaspec.impl.log import key_listing
from deltaspec.impl.log.location import table_location
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.log.object_store import ObjectLogStore
from deltaspec.impl.retention.vacuum import vacuum
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

SCHEMA = json.dumps(
    {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]}
)


@pytest.fixture(scope="module", params=["s3", "azure"])
def server(request: pytest.FixtureRequest) -> Iterator[ObjectStoreServer]:
    with serving(request.param) as running:
        yield running


def _create(log: DeltaLog, schema: str = SCHEMA) -> int:
    txn = OptimisticTransaction(log)
    txn.stage([Protocol(1, 2), Metadata("t", schema)])
    return txn.commit(operation=Operation("CREATE TABLE", {}))


def _append(log: DeltaLog, name: str) -> OptimisticTransaction:
    txn = OptimisticTransaction(log)
    txn.stage([AddFile(name, {}, 1, 1, True)])
    return txn


def _bucket(server: ObjectStoreServer) -> dict[str, bytes]:
    """Every object of the bucket with its bytes, keys byte for byte, read by clients that are
    not the code under test (boto3 for S3; Shared Key requests for Azurite)."""
    if server.kind == "azure":
        endpoint = server.options["endpoint"]
        listed = shared_key_request(
            endpoint, "GET", CONTAINER, {"restype": "container", "comp": "list"}
        )
        names = [n.text or "" for n in ET.fromstring(listed).iter("Name")]
        return {
            name: shared_key_request(endpoint, "GET", f"{CONTAINER}/{_escaped(name)}")
            for name in names
        }
    import boto3

    client = boto3.client(
        "s3", endpoint_url=server.options["endpoint"], region_name=server.options["region"],
        aws_access_key_id="k", aws_secret_access_key="s",
    )  # fmt: skip
    bucket = server.base_url.split("://", 1)[1]
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]
    return {k: client.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys}


def _escaped(key: str) -> str:
    return quote(key, safe="/").replace("/../", "/%2E%2E/").replace("/./", "/%2E/")


@pytest.mark.rules("PATH.TABLE_LOCATION")
def test_a_hostile_url_never_writes_into_its_neighbour(server: ObjectStoreServer) -> None:
    victim_url = server.table_url("victim")
    victim = victim_url.rsplit("/", 1)[1]
    victim_log = DeltaLog(victim_url, storage_options=server.options)
    _create(victim_log)
    _append(victim_log, "part-0.parquet").commit()
    server.put_raw(f"{victim}/part-0.parquet", b"data")
    before = _bucket(server)
    other = json.dumps({"type": "struct", "fields": []})
    for url in hostile_urls(server.base_url, victim):
        with pytest.raises(InvalidTableLocationError) as refused:
            log = DeltaLog(url, storage_options=server.options)
            _create(log, other)  # a CREATE TABLE that would replace the victim's schema
        assert refused.value.table == url
    assert _bucket(server) == before
    assert DeltaLog(victim_url, storage_options=server.options).snapshot().version == 1


@pytest.mark.rules("PATH.TABLE_LOCATION")
def test_tables_whose_names_share_a_prefix_stay_apart(server: ObjectStoreServer) -> None:
    """``t``, ``t2`` and ``t-x``: each table lists, loads and vacuums its own keys only; an
    escaped ``/`` is a ``/`` of the prefix and a trailing ``/`` names the same table."""
    base = server.table_url("p")
    logs = {
        suffix: DeltaLog(base + suffix, storage_options=server.options)
        for suffix in ("", "2", "-x")
    }
    for suffix, log in logs.items():
        _create(log)
        server.put_raw(f"{table_location(base + suffix).prefix}/old{suffix}.parquet", b"o")
    before = _bucket(server)
    later = logs[""].clock() + 60_000
    plan = vacuum(logs[""], retention_ms=0, enforce_retention=False, dry_run=True, now_ms=later)
    assert plan.deleted == ("old.parquet",)
    assert all(log.snapshot().version == 0 for log in logs.values())
    same = DeltaLog(base + "/", storage_options=server.options)
    assert same.table_path == base and same.snapshot().version == 0
    assert _bucket(server) == before


@pytest.mark.rules("PATH.STRAY_KEYS")
def test_stray_keys_stop_neither_load_append_nor_vacuum(server: ObjectStoreServer) -> None:
    url = server.table_url("stray")
    prefix = table_location(url).prefix
    log = DeltaLog(url, storage_options=server.options)
    _create(log)
    for stray in STRAY_KEYS:
        server.put_raw(f"{prefix}/{stray}")
    strays_before = {k: v for k, v in _bucket(server).items() if k[len(prefix) + 1 :] in STRAY_KEYS}
    assert len(strays_before) == len(STRAY_KEYS)  # the server kept every key as written
    assert DeltaLog(url, storage_options=server.options).snapshot().version == 0
    assert _append(log, "a.parquet").commit() == 1
    assert DeltaLog(url, storage_options=server.options).snapshot().version == 1
    done = vacuum(log, retention_ms=0, enforce_retention=False, now_ms=log.clock() + 60_000)
    assert done.deleted == ()  # no stray counted, none deleted
    after = _bucket(server)
    assert {k: after[k] for k in strays_before} == strays_before


def test_the_listing_of_a_stray_key_signs_as_botocore_does() -> None:
    """The S3 listing that reads past obstore signs requests with Signature Version 4; moto
    checks no signature, so the signature is compared with botocore's for one request."""
    botocore_auth = pytest.importorskip("botocore.auth")
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    config = {
        "bucket": "b", "endpoint": "http://127.0.0.1:9", "access_key_id": "AKID",
        "secret_access_key": "secret/key", "session_token": "tok", "region": "eu-west-3",
    }  # fmt: skip
    creds = key_listing._S3Credentials.of(config)
    query = {"list-type": "2", "prefix": "t/_delta_log/", "continuation-token": "a+b/c="}
    url = f"{creds.base}{creds.path}?{key_listing._s3_query(query)}"
    empty = hashlib.sha256(b"").hexdigest()
    request = AWSRequest("GET", url, headers={"x-amz-content-sha256": empty})
    signer = botocore_auth.S3SigV4Auth(Credentials("AKID", "secret/key", "tok"), "s3", "eu-west-3")
    signer.add_auth(request)
    signed_at = datetime.strptime(request.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    ours = key_listing.s3_signed_headers(creds, "GET", query, signed_at.replace(tzinfo=UTC))
    assert ours["Authorization"] == request.headers["Authorization"]


@pytest.mark.rules("PATH.STRAY_KEYS")
def test_stray_names_in_a_local_log_stop_nothing(tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    _create(log)
    strays = plant_local_strays(tmp_path / "_delta_log")
    assert DeltaLog(str(tmp_path)).snapshot().version == 0
    assert _append(log, "a.parquet").commit() == 1
    assert DeltaLog(str(tmp_path)).snapshot().version == 1
    later = log.clock() + 60_000
    assert vacuum(log, retention_ms=0, enforce_retention=False, now_ms=later).deleted == ()
    assert all(path.exists() for path in strays)


@pytest.mark.rules("RETRY.OUTCOME_UNKNOWN")
@pytest.mark.parametrize("stall", [2.5, 8.0])
def test_a_commit_that_lands_late_is_never_reported_failed(
    server: ObjectStoreServer, stall: float
) -> None:
    """The proxy holds every commit PUT for ``stall`` seconds, then forwards it; the client
    gives up after 0.5 s. A short stall lands while the writer still retries: it finds its own
    commit and returns the version. A long one outlasts every retry: the writer reports an
    unknown outcome naming the version, and the commit is in the log afterwards, once."""
    url = server.table_url("late")
    _create(DeltaLog(url, storage_options=server.options))
    with fault_proxy(server.options["endpoint"]) as proxy:
        store = ObjectLogStore(
            url, proxy.options(server.options), request_timeout=timedelta(seconds=0.5)
        )
        log = DeltaLog(url, store=store)
        txn = _append(log, "late.parquet")
        proxy.stall_commit_puts = stall
        try:
            assert txn.commit() == 1
            outcome = "committed"
        except CommitOutcomeUnknownError as unknown:
            assert (unknown.version, unknown.file) == (1, commit_name(1))
            assert txn.txn_id in str(unknown)
            outcome = "unknown"
        assert proxy.stalled >= 1
        time.sleep(stall + 1)  # every held PUT has reached the server now
    assert outcome == ("committed" if stall < 3 else "unknown")
    snapshot = DeltaLog(url, storage_options=server.options).snapshot()
    assert snapshot.version == 1  # landed once: no duplicate append at 2
    line = DeltaLog(url, storage_options=server.options).read_commit(1)
    assert any(getattr(a, "get", lambda k: None)("txnId") == txn.txn_id for a in line)


@pytest.mark.rules("PATH.TABLE_LOCATION")
@pytest.mark.parametrize(
    ("url", "canonical", "prefix"),
    [
        ("s3://b/t/", "s3://b/t", "t"),
        ("S3A://b/x/t", "s3a://b/x/t", "x/t"),
        ("s3://b/a%2Fb", "s3://b/a/b", "a/b"),
        ("s3://b/a%20b", "s3://b/a%20b", "a b"),
        ("az://c/d%C3%A9j%C3%A0", "az://c/d%C3%A9j%C3%A0", "déjà"),
        ("abfss://c@acct.dfs.core.windows.net/t", "abfss://c@acct.dfs.core.windows.net/t", "t"),
        ("s3://b", "s3://b", ""),
        ("s3://b/..t/.x", "s3://b/..t/.x", "..t/.x"),
    ],
)
def test_the_canonical_location_of_a_table(url: str, canonical: str, prefix: str) -> None:
    location = table_location(url)
    assert (location.url, location.prefix) == (canonical, prefix)
    assert table_location(location.url) == location  # the canonical form is its own


@pytest.mark.rules("PATH.TABLE_LOCATION")
@pytest.mark.parametrize("url", ["s3:///t", "s3://b/%ff", "s3://b/t#f", "file:///t"])
def test_urls_that_name_no_table_location(url: str) -> None:
    with pytest.raises(InvalidTableLocationError) as refused:
        table_location(url)
    assert refused.value.table == url
