"""Adapters and table readers by name: what ``--adapter NAME`` means to ``deltaspec
conformance``, ``deltaspec oracle`` and the pytest plugin. Each adapter is imported when it is
named, so a name needs only its own extra installed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from deltaspec.conformance.harness.reading import TableReader
from deltaspec.conformance.harness.suites import AdapterFactory

ADAPTERS = "model, impl, deltars, spark, deltaspark, deltaspark-ops, cmd:PROGRAM"


class UnknownAdapter(ValueError):
    pass


@contextmanager
def adapter_factory(name: str) -> Iterator[AdapterFactory]:
    """A factory making a fresh adapter per vector (given a scratch directory)."""
    if name == "model":
        from deltaspec.conformance.adapters.model import ModelAdapter

        yield lambda _root: ModelAdapter()
    elif name == "impl":
        from deltaspec.conformance.adapters.impl import ImplAdapter

        yield ImplAdapter
    elif name == "deltars":
        from deltaspec.conformance.adapters.deltars import DeltaRsAdapter

        yield DeltaRsAdapter
    elif name == "spark":
        from deltaspec.conformance.adapters.spark import SparkAdapter

        yield SparkAdapter
    elif name == "deltaspark":
        from deltaspec.conformance.adapters.deltaspark import DeltaSparkAdapter

        yield DeltaSparkAdapter
    elif name == "deltaspark-ops":
        from deltaspec.conformance.adapters.deltaspark_ops import DeltaSparkOpsAdapter

        yield DeltaSparkOpsAdapter
    elif name.startswith("cmd:"):
        from deltaspec.conformance.bridge.client import BridgeAdapter, BridgeProcess

        process = BridgeProcess(name.removeprefix("cmd:"))
        try:
            yield lambda _root: BridgeAdapter(process)
        finally:
            process.stop()
    else:
        raise UnknownAdapter(f"unknown adapter {name!r} ({ADAPTERS})")


@contextmanager
def table_reader(name: str) -> Iterator[TableReader | None]:
    """The reader of tables on disk behind adapter ``name`` (None: it cannot read one): the
    impl's, delta-rs's, the model's, live delta-spark's, or a bridge's ``read_table``."""
    from deltaspec.conformance.adapters import readers

    if name == "model":
        yield readers.ModelReader()
    elif name == "deltaspark":
        yield readers.DeltaSparkReader()
    elif name == "impl":
        yield readers.ImplReader()
    elif name == "deltars":
        yield readers.DeltaRsReader()
    elif name.startswith("cmd:"):
        from deltaspec.conformance.adapters.base import Capability
        from deltaspec.conformance.bridge.client import BridgeProcess, BridgeReader

        process = BridgeProcess(name.removeprefix("cmd:"))
        try:
            process._start()
            yield BridgeReader(process) if Capability.READ_TABLE in process.capabilities else None
        finally:
            process.stop()
    else:
        yield None
