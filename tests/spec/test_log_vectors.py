"""Log vectors (spec/log-vectors.md): generated deterministically, every spec rule covered by some
vector, run on the model, the impl, delta-rs and live delta-spark readers."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from deltaspec.conformance.engines.deltars.reader import DeltaRsReader
from deltaspec.conformance.engines.impl.reader import ImplReader
from deltaspec.conformance.engines.model.reader import ModelReader
from deltaspec.conformance.harness.logvectors import (
    FAMILIES,
    LogVector,
    LogVectorError,
    load_log_vectors,
    parse,
    run_log_vector,
    run_log_vectors,
)
from deltaspec.conformance.harness.reading import ReadFailure
from deltaspec.conformance.harness.scenarios import load_scenarios
from deltaspec.conformance.harness.verdicts import Verdict
from deltaspec.rules import load_rules
from deltaspec.spec.generators import log_vectors

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def vectors() -> list[LogVector]:
    return load_log_vectors()


def test_the_committed_vectors_are_the_generators_output():
    generated = log_vectors.generate()
    committed = {
        str(p.relative_to(REPO / "spec" / "vectors")): p.read_text(encoding="utf-8")
        for p in (REPO / "spec" / "vectors").rglob("*.json")
    }
    assert committed == generated


def test_every_family_has_vectors(vectors):
    families = {v.id.split("/")[0] for v in vectors}
    assert families == set(FAMILIES)


RULES_WITHOUT_VECTOR: dict[str, str] = {
    "PATH.TABLE_LOCATION": "object-store URLs: a vector's table is a folder the runner picks; "
    "tests/impl/log/test_impl_object_store_hostile.py and the services stage (--store) hold it",
    "RETRY.OUTCOME_UNKNOWN": "a write the store does not answer: vectors have no faulty store "
    "yet; the delayed-PUT proxy tests in tests/impl/log/test_impl_object_store_hostile.py hold it",
}
"""Rules no vector can state today, with the reason and where they are checked instead. The dict
only shrinks: a rule that gains a vector must leave it."""


def test_every_rule_in_the_spec_has_a_vector(vectors):
    """A scenario vector or a log vector cites every rule but the pinned ones: an engine checked
    only through the bridge learns something about each one."""
    cited = {r for s in load_scenarios() for r in s.rules} | {r for v in vectors for r in v.rules}
    known = {rule.id for rule in load_rules()}
    assert known - cited == set(RULES_WITHOUT_VECTOR)
    assert cited - known == set()


def test_a_reader_that_cannot_read_by_timestamp_skips_those_reads(vectors):
    class VersionsOnly:
        name = "versions-only"

        def read(self, root, version):
            return ModelReader().read(root, version)

    by_time = next(v for v in vectors if v.id == "snapshot/time-travel/by-in-commit-timestamp")
    assert run_log_vector(VersionsOnly(), by_time).verdict is Verdict.SKIPPED
    reads = [*by_time.data["reads"], {"version": 0, "expect": {"files": ["a"]}}]
    mixed = parse(json.dumps({**by_time.data, "reads": reads}), "memory")
    assert run_log_vector(VersionsOnly(), mixed).verdict is Verdict.PASS


def test_a_read_names_a_version_or_a_timestamp_not_both():
    read = {"version": 0, "timestamp": 0, "expect": {"files": []}}
    with pytest.raises(LogVectorError, match="schema violation"):
        parse(json.dumps({"id": "log/x", "description": "d", "rules": ["LOG.LISTING"],
                          "log": {}, "reads": [read]}), "memory")  # fmt: skip


def test_a_malformed_vector_is_refused():
    with pytest.raises(LogVectorError, match="schema violation"):
        parse(json.dumps({"id": "log/x", "description": "d", "rules": ["LOG.LISTING"],
                          "log": {}, "reads": []}), "memory")  # fmt: skip


@pytest.mark.rules("LOG.NEW_TABLE", "CHECKPOINT.READ", "RETENTION.TOMBSTONES")
def test_model_reader_passes_every_vector(vectors):
    results = run_log_vectors(ModelReader(), vectors)
    assert {r.case: r.verdict for r in results if r.verdict is not Verdict.PASS} == {}


def test_impl_reader_passes_every_vector_but_the_empty_log(vectors):
    results = {r.case: r for r in run_log_vectors(ImplReader(), vectors)}
    failing = {case for case, r in results.items() if r.verdict is not Verdict.PASS}
    # the impl's DeltaLog refuses an empty _delta_log (TABLE_NOT_FOUND) where LOG.NEW_TABLE
    # gives the empty snapshot (known issue, conformance/harness/known_issues/impl.json)
    assert failing == {"log/new-table/empty-log-directory"}
    (failure,) = results["log/new-table/empty-log-directory"].failures
    assert failure["got"] == {"error": "TABLE_NOT_FOUND"} and failure["version"] is None


def test_deltars_reader_runs_the_families(vectors):
    results = {r.case: r.verdict for r in run_log_vectors(DeltaRsReader(), vectors)}
    assert sum(v is Verdict.PASS for v in results.values()) >= 18
    # delta-kernel-rs gives up on a _last_checkpoint naming a missing checkpoint instead of
    # falling back to an older complete one (CHECKPOINT.READ step 3)
    assert results["checkpoint/read/dangling-hint-falls-back"] is Verdict.WRONG
    # delta-rs follows a symlinked commit out of the table and skips a directory at a commit
    # name (a silent gap): PATH.NO_SYMLINKS and PATH.REGULAR_FILES catch both as unsafe
    assert results["snapshot/special-files/symlinked-commit"] is Verdict.UNSAFE
    assert results["snapshot/special-files/directory-at-commit-name"] is Verdict.UNSAFE
    # delta-rs keeps the add of a line holding a remove and an add (ACTION.LINE_FORMAT)
    assert results["action/line-format/two-actions-on-one-line"] is Verdict.UNSAFE


@pytest.mark.parametrize("reader", [ImplReader(), DeltaRsReader()], ids=lambda r: r.name)
def test_every_known_log_vector_issue_still_reproduces(reader, vectors):
    """An entry whose vector now passes must go (the list only shrinks)."""
    from deltaspec.conformance.harness.verdicts import load_known_issues

    by_id = {v.id: v for v in vectors}
    entries = [e for e in load_known_issues(reader.name).values() if e.case in by_id]
    assert entries
    for entry in entries:
        assert run_log_vector(reader, by_id[entry.case]).verdict.value == entry.verdict


def test_a_reader_that_ignores_checkpoints_is_caught(vectors):
    class ReplayOnly(ModelReader):
        def read(self, root, version):
            for path in (root / "_delta_log").glob("*.checkpoint*.parquet"):
                path.unlink()
            return super().read(root, version)

    cleaned = next(v for v in vectors if v.id == "checkpoint/read/cleaned-log-starts-at-checkpoint")
    assert run_log_vector(ReplayOnly(), cleaned).verdict is Verdict.WRONG


def test_a_reader_that_keys_files_by_path_alone_loses_a_file(vectors):
    class PathKeyed(ModelReader):
        def read(self, root, version):
            state = super().read(root, version)
            return {**state, "files": sorted(set(state["files"]))}

    dv = next(v for v in vectors if v.id == "snapshot/file-key/path-and-deletion-vector")
    assert run_log_vector(PathKeyed(), dv).verdict is Verdict.UNSAFE


def test_a_reader_that_reads_a_corrupt_table_is_unsafe(vectors):
    class Lenient(ModelReader):
        def read(self, root, version):
            try:
                return super().read(root, version)
            except ReadFailure:
                return {"version": 0, "files": ["a"]}

    missing = next(v for v in vectors if v.id == "snapshot/protocol-metadata/missing-metadata")
    assert run_log_vector(Lenient(), missing).verdict is Verdict.UNSAFE


@pytest.mark.spark
def test_live_delta_spark_reads_the_families(spark, vectors):
    from deltaspec.conformance.engines.deltaspark.reader import DeltaSparkReader

    results = {r.case: r for r in run_log_vectors(DeltaSparkReader(spark), vectors)}
    failing = {case: r.verdict for case, r in results.items() if r.verdict is not Verdict.PASS}
    # the reference engine agrees with every hand-reasoned expectation but the data-path
    # check: it lists ../outside.parquet and _delta_log/x.parquet as live files where
    # PATH.DATA_FILE refuses the load (known_issues/deltaspark.json); p/../x.parquet too, as
    # x.parquet. The reader checks a version as delta-spark's own time travel does
    # (checkVersionExists before getSnapshotAt): DELTA_NO_COMMITS_FOUND on an empty log,
    # DELTA_VERSION_NOT_FOUND below a cleaned-up commit 0. Its time-travel errors
    # (DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION, DELTA_TIMESTAMP_GREATER_THAN_COMMIT) reach
    # Python as pyspark's AnalysisException, not as a Py4JJavaError: the reader maps both.
    assert failing == {
        "snapshot/data-path/inside-delta-log": Verdict.UNSAFE,
        "snapshot/data-path/parent-segment": Verdict.UNSAFE,
        "snapshot/data-path/inner-parent-segment": Verdict.UNSAFE,
        # it follows a symlinked commit out of the table (PATH.NO_SYMLINKS), and fails every
        # read of a log with a directory at a commit name with FAILED_READ_FILE.FILE_NOT_EXIST
        # (PATH.REGULAR_FILES: NOT_REGULAR_FILE, and version 1 still reads)
        "snapshot/special-files/symlinked-commit": Verdict.UNSAFE,
        "snapshot/special-files/directory-at-commit-name": Verdict.WRONG,
        # its log cleanup (MetadataCleanup.doLogCleanup) takes a torn checkpoint as the start
        # of the retained log and deletes the commits below it (RETENTION.VERIFIED_CHECKPOINT)
        TORN_CLEANUP: Verdict.WRONG,
        TORN_ONLY: Verdict.WRONG,
        # no seam between its listing and its reads: the interleaved loads are declined
        RELIST: Verdict.SKIPPED,
        RELIST_HINT: Verdict.SKIPPED,
        # it keeps the add of a line holding a remove and an add, and a commit line that does
        # not parse blocks the versions before it too (ACTION.LINE_FORMAT)
        "action/line-format/two-actions-on-one-line": Verdict.UNSAFE,
        "action/line-format/line-not-json": Verdict.WRONG,
        # it reads any run of digits before .json as a commit (deltaFileRegex (\d+)\.json), so
        # 19- and 21-digit strays are two more commits 3 and every read fails with
        # DELTA_VERSIONS_NOT_CONTIGUOUS (LOG.COMMIT_FILE_NAME, PATH.STRAY_KEYS)
        "log/commit-file-name/twenty-digits-exactly": Verdict.WRONG,
        # it refuses a protocol with feature lists at versions without table features
        # (ACTION.PROTOCOL_FEATURE_LISTS) when it loads the latest version, version 0 too
        "action/protocol-metadata/reader-features-below-reader-version-3": Verdict.WRONG,
        "action/protocol-metadata/writer-features-below-writer-version-7": Verdict.WRONG,
    }, {case: results[case].details for case in failing}


REFERENCE_BRIDGE = f"cmd:{shlex.quote(sys.executable)} -m deltaspec.conformance.bridge.reference"


def test_a_bridge_reads_fixtures_and_log_vectors_through_read_table(tmp_path, fixtures_dir):
    from deltaspec.cli import main

    report = tmp_path / "r.json"
    code = main(["conformance", "--adapter", REFERENCE_BRIDGE, "--suite", "fixtures",
                 "--fixtures", str(fixtures_dir), "--json", str(report)])  # fmt: skip
    data = json.loads(report.read_text())
    assert code == 0 and data["counts"]["fixtures"]["pass"] > 300
    assert "read_table" in data["coverage"]["capabilities"]
    main(["conformance", "--adapter", REFERENCE_BRIDGE, "--suite", "logs", "--json", str(report)])
    cases = json.loads(report.read_text())["suites"]["logs"]
    assert len(cases) == len(load_log_vectors())
    verdicts = {c["case"]: c["verdict"] for c in cases if c["verdict"] != "pass"}
    assert verdicts == {
        "log/new-table/empty-log-directory": "wrong",  # the impl's known issue, unexcused
        # no bridge request acts between an engine's listing and its reads (spec/bridge.md)
        RELIST: "skipped",
        RELIST_HINT: "skipped",
    }


def test_a_bridge_without_read_table_skips_the_table_suites(tmp_path):
    from deltaspec.cli import main

    program = tmp_path / "actions_only.py"
    program.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    caps = ['actions', 'a_capability_from_the_future']\n"
        "    res = {'protocol': 'deltaspec-bridge/1', 'name': 'x', 'capabilities': caps}\n"
        "    print(json.dumps({'id': r['id'], 'result': res if r['method'] == 'hello' else None}),"
        " flush=True)\n"
    )
    report = tmp_path / "r.json"
    code = main(["conformance", "--adapter", f"cmd:{sys.executable} {program}", "--suite",
                 "logs", "--json", str(report)])  # fmt: skip
    data = json.loads(report.read_text())
    assert code == 3 and data["suites"]["logs"][0]["verdict"] == "skipped"
    assert "no read_table" in data["suites"]["logs"][0]["details"][0]
    assert data["coverage"]["ran"] == 0
    main(["conformance", "--adapter", f"cmd:{sys.executable} {program}", "--suite", "logs",
          "--require", "actions", "--json", str(report)])  # fmt: skip
    coverage = json.loads(report.read_text())["coverage"]
    assert coverage["capabilities"] == ["actions"]  # declared; the unknown one is ignored
    assert not [p for p in coverage["problems"] if "required" in p]


SPEC_ONLY_BRIDGE = REPO / "conformance" / "bridge" / "examples" / "deltars_read_table.py"


def test_a_bridge_written_from_the_spec_alone_reads_fixtures_and_log_vectors(
    tmp_path, fixtures_dir
):
    """conformance/bridge/examples/deltars_read_table.py imports nothing of deltaspec: delta-rs
    behind read_table, as another implementer would write it from spec/bridge.md."""
    from deltaspec.cli import main

    assert "deltaspec" not in {
        line.split()[1].split(".")[0]
        for line in SPEC_ONLY_BRIDGE.read_text().splitlines()
        if line.startswith(("import ", "from "))
    }
    adapter = f"cmd:{shlex.quote(sys.executable)} {SPEC_ONLY_BRIDGE}"
    report = tmp_path / "r.json"
    main(["conformance", "--adapter", adapter, "--suite", "logs", "--json", str(report)])
    assert json.loads(report.read_text())["counts"]["logs"]["pass"] >= 23
    main(["conformance", "--adapter", adapter, "--suite", "fixtures", "--fixtures",
          str(fixtures_dir), "--json", str(report)])  # fmt: skip
    data = json.loads(report.read_text())
    assert data["counts"]["fixtures"]["pass"] >= 300 and "unsafe" not in data["counts"]["fixtures"]


def _vector(vectors, id_):
    return next(v for v in vectors if v.id == id_)


TORN_CLEANUP = "retention/verified-checkpoint/cleanup-passes-over-torn-checkpoint"
TORN_ONLY = "retention/verified-checkpoint/torn-only-checkpoint-deletes-nothing"
RELIST = "snapshot/relist/cleanup-between-listing-and-reads"
RELIST_HINT = "snapshot/relist/hinted-checkpoint-cleaned-up"


@pytest.mark.rules("RETENTION.VERIFIED_CHECKPOINT")
@pytest.mark.parametrize("case", [TORN_CLEANUP, TORN_ONLY])
def test_a_cleanup_that_trusts_a_torn_checkpoint_is_caught(vectors, monkeypatch, case):
    """The impl's cleanup with its read-back check switched off deletes the commits the torn
    checkpoint claims to cover: the reads the whole checkpoint (or the commits) keep fail."""
    from deltaspec.impl.retention import log_cleanup

    assert run_log_vector(ImplReader(), _vector(vectors, case)).verdict is Verdict.PASS
    monkeypatch.setattr(log_cleanup, "_readable", lambda log, checkpoints: True)
    result = run_log_vector(ImplReader(), _vector(vectors, case))
    assert result.verdict is Verdict.WRONG
    assert {f["got"]["error"] for f in result.failures} <= {"VERSION_NOT_FOUND",
                                                           "VERSIONS_NOT_CONTIGUOUS"}  # fmt: skip


@pytest.mark.rules("RETENTION.LOG")
def test_a_cleanup_that_deletes_nothing_is_caught(vectors):
    class NoCleanup(ModelReader):
        def clean_up_expired_logs(self, root):
            pass

    result = run_log_vector(NoCleanup(), _vector(vectors, TORN_CLEANUP))
    # version 1 still reads where cleanup removed it: wrong, not unsafe (nothing is lost)
    assert result.verdict is Verdict.WRONG
    assert [(f["version"], f["message"]) for f in result.failures] == [
        (1, "the log cleanup kept a version it had to delete")
    ]


@pytest.mark.rules("SNAPSHOT.RELIST")
@pytest.mark.parametrize("reader", [ImplReader(), ModelReader()], ids=lambda r: r.name)
def test_a_reader_that_does_not_list_again_is_caught(vectors, monkeypatch, reader):
    from deltaspec.conformance.engines.model import reader as model_reader
    from deltaspec.impl.snapshot import delta_log

    monkeypatch.setattr(delta_log, "RELIST_ATTEMPTS", 1)
    monkeypatch.setattr(model_reader, "RELIST_ATTEMPTS", 1)
    result = run_log_vector(reader, _vector(vectors, RELIST))
    assert result.verdict is Verdict.WRONG
    assert result.failures[0]["version"] is None and "error" in result.failures[0]["got"]


def test_a_reader_that_never_lists_cannot_pass_an_interleaved_vector(vectors):
    """A reader that ignores ``after_listing`` reads the log as it was: the runner reports it
    as an error instead of letting the vector pass without the race."""

    class Ignores(ModelReader):
        def read_interleaved(self, root, version, after_listing):
            return self.read(root, version)

    for case in (RELIST, RELIST_HINT):
        result = run_log_vector(Ignores(), _vector(vectors, case))
        assert result.verdict is Verdict.ERROR
        assert "never called after_listing" in result.failures[0]["got"]


def test_readers_without_the_capabilities_skip_the_vectors(vectors):
    class Plain:
        name = "plain"

        def read(self, root, version):
            return ModelReader().read(root, version)

    reasons = {
        case: run_log_vector(Plain(), _vector(vectors, case)).details
        for case in (TORN_CLEANUP, RELIST)
    }
    assert reasons == {
        TORN_CLEANUP: ("plain cannot run its own log cleanup (no log_cleanup_by_retention)",),
        RELIST: ("plain cannot be interleaved with a load (no load_interleaving)",),
    }


def test_only_runs_a_directory_of_log_vectors_alone(tmp_path):
    import shutil

    from deltaspec.cli import main

    shutil.copytree(REPO / "spec" / "vectors" / "snapshot" / "relist", tmp_path / "relist")
    report = tmp_path / "r.json"
    code = main(["conformance", "--adapter", "model", "--suite", "logs", "--only",
                 str(tmp_path / "relist"), "--json", str(report)])  # fmt: skip
    cases = json.loads(report.read_text())["suites"]["logs"]
    assert code == 0
    assert {c["case"]: c["verdict"] for c in cases} == {RELIST: "pass", RELIST_HINT: "pass"}
