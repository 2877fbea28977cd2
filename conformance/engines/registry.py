"""Adapters and table readers by name: what ``--adapter NAME`` means to ``deltaspec
conformance``, ``deltaspec oracle`` and the pytest plugin; the one module that knows every
engine. The engines that need an extra (deltars, spark, deltaspark) are imported when named, so
a name needs only its own extra installed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..harness.adapter import Capability
from ..harness.reading import TableReader
from ..harness.suites import AdapterFactory
from ..releases.cache import installed
from ..releases.errors import NotRunnable
from ..releases.pins import load_pins
from .cmd.adapter import BridgeAdapter, BridgeProcess, BridgeReader
from .deltaspark.reader import DeltaSparkReader
from .impl.adapter import ImplAdapter
from .impl.reader import ImplReader
from .model.adapter import ModelAdapter
from .model.reader import ModelReader

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from .spark_api import Engine

ADAPTERS = (
    "model, impl, deltars, spark, deltaspark, deltaspark-ops, deltaspark@X.Y.Z (a pinned "
    "release fetched by `deltaspec engines fetch`), cmd:PROGRAM"
)
PINNED_ENGINE = "deltaspark@"
"""``deltaspark@X.Y.Z``: that published release, run by the spec-only bridge in its own pyspark
venv (conformance/releases); ``deltaspark`` alone is the in-process engine."""


WITHOUT_READER = frozenset({"spark", "deltaspark-ops"})
"""Adapters that cannot read a table on disk (their fixtures and logs suites are skipped)."""


class UnknownAdapter(ValueError):
    pass


def release_profile(name: str) -> str | None:
    """The delta-spark release an adapter follows by its name (``deltaspark@3.3.2``: 3.3.2),
    which a conformance run judges it by when no ``--profile`` is given."""
    return name.removeprefix(PINNED_ENGINE) if name.startswith(PINNED_ENGINE) else None


def bridge_command(name: str) -> str | Sequence[str] | None:
    """The bridge program behind ``cmd:PROGRAM`` or ``deltaspark@X.Y.Z`` (None: not a bridge).

    Raises UnknownAdapter for a release engines.json does not pin, NotRunnable for one it pins
    as not running here, EngineNotFetched (naming the fetch command) when the engine is not in
    the cache, and ChecksumMismatch when a cached jar is not the pinned one."""
    if name.startswith("cmd:"):
        return name.removeprefix("cmd:")
    release = release_profile(name)
    if release is None:
        return None
    pins = load_pins()
    if release not in pins.by_release:
        raise UnknownAdapter(
            f"unknown adapter {name!r}: engines.json pins {PINNED_ENGINE}"
            + f", {PINNED_ENGINE}".join(pins.releases())
        )
    pin = pins.by_release[release]
    if not pin.runs:
        raise NotRunnable(release, pin.why_not)
    return installed(pin).bridge_command()


@contextmanager
def adapter_factory(name: str) -> Iterator[AdapterFactory]:
    """A factory making a fresh adapter per vector (given a scratch directory)."""
    if name == "model":
        yield lambda _root: ModelAdapter()
    elif name == "impl":
        yield ImplAdapter
    elif name == "deltars":
        from .deltars.adapter import DeltaRsAdapter  # lazy: deltalake is optional

        yield DeltaRsAdapter
    elif name == "spark":
        from .spark.adapter import SparkAdapter  # lazy: pyspark is optional

        yield SparkAdapter
    elif name == "deltaspark":
        from .deltaspark.adapter import DeltaSparkAdapter  # lazy: pyspark is optional

        yield DeltaSparkAdapter
    elif name == "deltaspark-ops":
        from .deltaspark.ops import DeltaSparkOpsAdapter  # lazy: pyspark is optional

        yield DeltaSparkOpsAdapter
    elif (command := bridge_command(name)) is not None:
        process = BridgeProcess(command)
        try:
            yield lambda _root: BridgeAdapter(process)
        finally:
            process.stop()
    else:
        raise UnknownAdapter(f"unknown adapter {name!r} ({ADAPTERS})")


@contextmanager
def table_reader(name: str) -> Iterator[TableReader | None]:
    """The reader of tables on disk behind adapter ``name`` (None: it cannot read one): the
    impl's, delta-rs's, the model's, live delta-spark's, or a bridge's ``read_table``. Raises
    UnknownAdapter for a name no adapter has, and ImportError (before any case runs) when the
    extra a reader needs is not installed, as adapter_factory does."""
    if name == "model":
        yield ModelReader()
    elif name == "deltaspark":
        # the extra's module imported first: when it is missing, one error before any case runs
        import pyspark  # noqa: F401  # lazy: pyspark is optional

        yield DeltaSparkReader()
    elif name == "impl":
        yield ImplReader()
    elif name == "deltars":
        from .deltars.reader import DeltaRsReader  # lazy: deltalake is optional

        yield DeltaRsReader()
    elif (command := bridge_command(name)) is not None:
        process = BridgeProcess(command)
        try:
            process._start()
            yield BridgeReader(process) if Capability.READ_TABLE in process.capabilities else None
        finally:
            process.stop()
    elif name in WITHOUT_READER:
        yield None
    else:
        raise UnknownAdapter(f"unknown adapter {name!r} ({ADAPTERS})")


def make_engines(spark: SparkSession) -> dict[str, Engine]:
    """delta-spark (``delta``) and our Spark path (``ours``) on ``spark``, which must have
    delta-spark loaded (``deltaspark.session.delta_session``), with ``format("deltaspec")``
    registered."""
    from ...spark.datasource import register  # lazy: pyspark is optional
    from .deltaspark.spark_api import DELTA_SPARK  # lazy: pyspark is optional
    from .spark.spark_api import OURS  # lazy: pyspark is optional

    register(spark)
    return {DELTA_SPARK.name: DELTA_SPARK, OURS.name: OURS}
