"""The catalog of seeded impl bugs (mutants) the oracle is scored on.

A mutant is one small, plausible mistake of a Delta writer's author: a snippet of one impl
function replaced by a slightly wrong one. Every mutant is keyed by the spec rule it breaks
(``CONFLICT.APPEND_MATCH``; :data:`BY_RULE`, and ``deltaspec mutants --json`` reports by rule).
The function it changes is the one impl, or Spark path, function marked ``@rule`` with that rule
(found through the rule registry, so a rename follows the marker), or, when the snippet is in a
helper that marked function relies on, the helper named by ``function``: ``module:qualname`` under
``deltaspec.impl`` (under ``deltaspec.spark``: ``spark.module:qualname``). A rule, function or
snippet that is no longer found exactly once is a loud :class:`MutantError`, never a silent pass;
the snippet is matched as written or, after a reformatting, with any whitespace between its
characters.

``killed_by`` is the cheapest oracle stage that kills the mutant, as the full run recorded in
``benchmarks/results/mutants.json`` (``deltaspec mutants --json``) found it; the tests run only
that stage per mutant. A mutant no stage killed in that run is a known survivor
(``killed_by=None``) and says which stage is ``expected`` to kill it once that stage sees the
behaviour (the tests then run that stage for it as soon as it exists).
"""

from __future__ import annotations

import importlib
import inspect
import re
import textwrap
from dataclasses import dataclass
from functools import cache
from typing import Any

from deltaspec.rules import RULE_ID, load_rules

IMPL = "deltaspec.impl."
SPARK_PREFIX = "spark."
"""A ``where`` of the Spark path (``spark.<module>:<qualname>``, under ``deltaspec``); any other
``module:qualname`` is under ``deltaspec.impl``."""
SIDES = ("impl", "spark")
STAGE_NAMES = ("vectors", "race", "machine", "services", "store", "spark")
"""Every stage a mutant may name: today's three, and the table-services stage (VACUUM, log
cleanup, retention, time travel) and the differential Spark stage (against live delta-spark)."""


class MutantError(Exception):
    """A mutant that no longer applies: its rule or function is not found, or its snippet is
    not found exactly once."""


STAGES: tuple[str, ...] = ("vectors", "race", "services", "store", "machine", "spark")
"""The stages a mutant runs, in order: ``IMPL_STAGE_NAMES`` of conformance/oracle/stages.py, the
registry ``deltaspec check`` runs too (spelled out here, in a module light to import, for the
parser of ``deltaspec mutants``; a test keeps them equal). The vectors on the model alone are
left out: a mutant of the impl cannot fail them."""


@dataclass(frozen=True)
class Mutant:
    id: str
    description: str
    rule: str
    """The rule the mutant breaks (``CONFLICT.APPEND_MATCH``): the catalog's key."""
    old: str
    new: str
    """``old`` and ``new`` are written as in the function's dedented source."""
    killed_by: str | None = "vectors"
    """The cheapest stage that killed it in the recorded run; None: a known survivor."""
    side: str = "impl"
    """Which marked functions a rule names: the core impl's or the Spark path's."""
    expected: str | None = None
    """For a known survivor, the stage expected to kill it."""
    function: str | None = None
    """The helper the snippet is in (``module:qualname``), when it is not in the function marked
    with the rule itself."""

    @property
    def target(self) -> str:
        """``module:qualname`` of the function the mutant changes."""
        return resolve_target(self)

    @property
    def module(self) -> str:
        """The impl module it breaks, without the ``deltaspec.impl.`` prefix."""
        return self.target.split(":")[0].removeprefix(IMPL).removeprefix("deltaspec.")


def resolve(target: str) -> tuple[Any, str, Any]:
    """The owner (module or class), attribute name and raw attribute of ``module:qualname``."""
    module_name, qualname = target.split(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name, inspect.getattr_static(owner, name)


def source_of(target: str) -> str:
    """The dedented source of ``module:qualname``, decorators included (a property's getter, a
    static method's function)."""
    raw = resolve(target)[2]
    raw = getattr(raw, "fget", raw)
    return textwrap.dedent(inspect.getsource(getattr(raw, "__func__", raw)))


@cache
def resolve_target(mutant: Mutant) -> str:
    """The function ``mutant`` changes: its helper ``function``, or the one function of its side
    marked with its rule (when several are, the one whose source holds the snippet)."""
    if not RULE_ID.fullmatch(mutant.rule) or mutant.rule not in {r.id for r in load_rules()}:
        raise MutantError(f"{mutant.id}: no rule {mutant.rule!r} in spec/")
    if mutant.function is not None:
        where = mutant.function
        if where.startswith(SPARK_PREFIX):
            where = "deltaspec." + where
        elif not where.startswith("deltaspec."):
            where = IMPL + where
        try:
            resolve(where)
        except (ImportError, AttributeError) as error:
            raise MutantError(f"{mutant.id}: no function {where} ({error})") from error
        return where
    # every Python process of a mutant run imports this module at its start (mutant_env.py)
    from deltaspec.trace import marked  # lazy: Spark workers' start-up (0.6 s)

    found = marked(mutant.rule, mutant.side)
    if len(found) > 1:
        found = [where for where in found if len(_snippets(source_of(where), mutant.old)) == 1]
    if len(found) != 1:
        raise MutantError(
            f"{mutant.id}: {len(found)} {mutant.side} functions marked @rule({mutant.rule!r})"
            + (" hold its snippet" if found else "")
        )
    return found[0]


def _snippets(source: str, old: str) -> list[tuple[int, int]]:
    """Where ``old`` is in ``source``: as written or, if not there, with any whitespace between
    its characters (a reformatted function keeps its mutants)."""
    exact = [m.span() for m in re.finditer(re.escape(old), source)]
    if exact:
        return exact
    loose = r"\s*".join(re.escape(char) for char in old if not char.isspace())
    return [m.span() for m in re.finditer(loose, source)] if loose else []


def mutated_source(mutant: Mutant, target: str | None = None) -> str:
    """The dedented source of the mutant's function (``target``, when already resolved) with
    its snippet replaced."""
    source = source_of(mutant.target if target is None else target)
    found = _snippets(source, mutant.old)
    if len(found) != 1:
        raise MutantError(f"{mutant.id}: snippet found {len(found)} times in {mutant.target}")
    ((start, end),) = found
    return source[:start] + mutant.new + source[end:]


def by_id(mutant_id: str) -> Mutant:
    found = next((m for m in CATALOG if m.id == mutant_id), None)
    if found is None:
        raise MutantError(f"no such mutant: {mutant_id!r}")
    return found


SURVIVES = None
"""``killed_by`` of a known survivor (then ``expected`` names the stage that should kill it)."""


def _m(
    id: str,
    description: str,
    rule: str,
    old: str,
    new: str,
    killed_by: str | None = "vectors",
    expected: str | None = None,
    *,
    function: str | None = None,
) -> Mutant:
    return Mutant(id, description, rule, old, new, killed_by, expected=expected, function=function)


def _spark(
    id: str,
    description: str,
    rule: str,
    old: str,
    new: str,
    killed_by: str | None = SURVIVES,
    expected: str | None = "spark",
    *,
    function: str | None = None,
) -> Mutant:
    return Mutant(id, description, rule, old, new, killed_by, "spark", expected, function)


CONFLICTS: tuple[Mutant, ...] = (
    _m("delete-delete-skipped", "the delete/delete check is not run",
       "CONFLICT.ORDER_V32",
       "(check_added_files, check_deleted_vs_read, check_deleted_vs_deleted)",
       "(check_added_files, check_deleted_vs_read)"),
    _m("serializable-as-write-serializable", "Serializable ignores blind appends, as WS does",
       "CONFLICT.APPEND_CANDIDATES",
       'if level == "WriteSerializable" and win.is_blind_append:',
       'if level in ("WriteSerializable", "Serializable") and win.is_blind_append:'),
    _m("whole-table-read-ignored", "a whole-table read does not conflict with deletes",
       "CONFLICT.DELETE_READ_WHOLE_TABLE",
       'if win.removed and cur.reads.whole_table and profile.has("whole_table_delete_read"):',
       "if False:"),
    _m("data-predicates-for-appends", "data filters join the read predicate",
       "PREDICATE.PARTITION_ONLY",
       "conjoin(f for f in filters if f.columns() <= allowed)",
       "conjoin(filters)"),
    _m("metadata-conflict-ignored", "a concurrent metadata change is silently adopted",
       "CONFLICT.METADATA",
       'return _raise(errors.MetadataChangedException, "the metadata changed", cur, win)',
       "return replace(cur, metadata=win.metadata)"),
    _m("protocol-conflict-ignored", "two protocol changes do not conflict",
       "CONFLICT.PROTOCOL", "if cur.commits_protocol:", "if False:"),
    _m("app-txn-conflict-ignored", "a winner's SetTransaction for a read app id is ignored",
       "CONFLICT.APP_TXN",
       "clash = sorted(cur.reads.app_ids & win.app_ids)", "clash: list[str] = []"),
    _m("domain-conflict-ignored", "two commits of the same metadata domain do not conflict",
       "CONFLICT.DOMAIN",
       "clash = sorted(cur.domains & win.domains)", "clash: list[str] = []"),
    _m("compaction-removes-ignored", "delete/read skips the winner's dataChange=false removes",
       "CONFLICT.DELETE_READ",
       "for removed in win.removed:",
       "for removed in [r for r in win.removed if r.data_change]:", "vectors", "vectors"),
    _m("compaction-adds-not-candidates", "append check skips the winner's dataChange=false adds",
       "CONFLICT.APPEND_CANDIDATES",
       "    return win.added\n", "    return [a for a in win.added if a.data_change]\n",
       "vectors", "vectors"),
    _m("null-partition-matches", "an unknown (null) predicate result selects the file",
       "PREDICATE.NULLS",
       "pc.fill_null(truth, False)", "pc.fill_null(truth, True)", "vectors", "vectors",
       function="predicates:matches"),
    _m("typed-empty-string-is-value", 'an empty partition value compares as "" instead of null',
       "PREDICATE.TYPING", 'if raw is None or raw == "":', "if raw is None:", "vectors", "vectors"),
    _m("typed-timestamp-zone-dropped", "a timestamp literal's zone is dropped, not converted "
       "to UTC", "PREDICATE.TYPING",
       "return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value",
       "return value.replace(tzinfo=None)", "vectors", "vectors",
       function="predicates:_timestamp"),
)  # fmt: skip

TRANSACTION: tuple[Mutant, ...] = (
    _m("only-last-winner", "only the latest winning commit is checked",
       "RETRY.NEXT_VERSION",
       "range(attempt_version, latest + 1)", "range(latest, latest + 1)"),
    _m("retry-skips-first-winner", "off by one: the first winner after the read is not checked",
       "RETRY.NEXT_VERSION",
       "range(attempt_version, latest + 1)", "range(attempt_version + 1, latest + 1)"),
    _m("retry-version-off-by-one", "the retry aims one version too far, leaving a gap",
       "RETRY.NEXT_VERSION",
       "return latest + 1, current", "return latest + 2, current"),
    _m("max-retries-off-by-one", "maxCommitAttempts allows one attempt fewer",
       "RETRY.MAX_ATTEMPTS",
       "attempt > profile.max_commit_attempts", "attempt >= profile.max_commit_attempts",
       "vectors", "vectors"),
    _m("no-snapshot-isolation-downgrade", "no-data-change commits keep the table's level",
       "ISOLATION.DOWNGRADE",
       "if only_files and not changes and may_downgrade:", "if False:"),
    _m("downgrade-despite-metadata", "a metadata change still downgrades to SnapshotIsolation",
       "ISOLATION.DOWNGRADE",
       "if only_files and not changes and may_downgrade:",
       "if not changes and may_downgrade:"),
    _m("read-version-recorded-wrong", "commitInfo.readVersion records the attempt version",
       "TXN.COMMIT_INFO",
       'fields["readVersion"] = self.read_version',
       'fields["readVersion"] = self.read_version + 1'),
    _m("app-id-read-not-recorded", "txn_version does not record the app id as read",
       "TXN.READ_APP_IDS", "self._app_ids.add(app_id)", "pass"),
    _m("read-predicate-not-recorded", "a filtered scan does not record its partition predicate",
       "TXN.READ_PREDICATES", "self._predicates.append(predicate)", "pass"),
    _m("files-read-not-recorded", "a filtered scan does not record the files it read",
       "TXN.READ_FILES", "self._files.update((f.path, f) for f in scanned)", "pass"),
    _m("whole-table-read-not-flagged", "a whole-table read is recorded as an ordinary predicate",
       "TXN.READ_WHOLE_TABLE", "self._whole_table = True", "self._whole_table = False"),
    _m("blind-append-without-reads", "isBlindAppend ignores what the transaction read",
       "TXN.BLIND_APPEND",
       "return only_adds and not reads.predicates and not reads.files", "return only_adds"),
    _m("empty-commit-never-skipped", "commitIfNeeded records empty commits",
       "TXN.EMPTY_COMMIT", "and skippable_level\n", "and False\n"),
    _m("append-only-not-enforced", "delta.appendOnly is not enforced",
       "TXN.APPEND_ONLY", "if append_only and any(", "if False and any("),
    _m("set-transaction-repeats-kept", "a repeated SetTransaction of one app id is kept twice",
       "TXN.SET_TRANSACTION_DEDUP",
       "continue\n", "pass\n", "services"),
    _m("two-metadata-accepted", "a commit may change the metadata twice",
       "TXN.SINGLE_METADATA", "if len(_metadatas(actions)) > 1:",
       "if len(_metadatas(actions)) > 2:"),
    _m("first-commit-without-metadata", "a table may be created without metadata",
       "TXN.FIRST_COMMIT",
       'if not _metadatas(actions) and profile.has("commit_validation"):', "if False:"),
    _m("first-commit-without-protocol", "no default protocol is added to the first commit",
       "TXN.FIRST_COMMIT",
       "return actions if _protocols(actions) else [DEFAULT_PROTOCOL, *actions]",
       "return actions"),
    _m("partition-values-subset-accepted", "an add missing a partition column is accepted",
       "TXN.PARTITION_COLUMNS",
       "if set(add.partition_values) != keys:", "if not set(add.partition_values) <= keys:"),
    _m("domain-metadata-without-feature", "domain metadata without the domainMetadata feature",
       "TXN.DOMAIN_METADATA",
       'if "domainMetadata" not in protocol.features(new_protocol):', "if False:"),
    _m("duplicate-actions-accepted", "a file key added twice in one commit is accepted",
       "TXN.DUPLICATE_ACTIONS", "for k, n in keys_seen.items() if n > 1",
       "for k, n in keys_seen.items() if n > 2"),
    _m("downgrade-compares-reader-only", "a lower writer version is not a protocol downgrade",
       "TXN.PROTOCOL_DOWNGRADE",
       "return lower_reader or new.min_writer_version < old.min_writer_version",
       "return lower_reader", "vectors", "vectors",
       function="table.features:is_downgrade"),
    _m("downgrade-by-versions-only", "with table features, dropping a feature is no downgrade",
       "TXN.PROTOCOL_DOWNGRADE", "if feature_based:", "if False:", "vectors", "vectors",
       function="table.features:is_downgrade"),
    _m("dv-enable-flag-ignored", "a deletion vector is added to a table that does not enable "
       "them", "DV.ADD_CHECKS", "if metadata is None or not enabled_in(metadata.configuration):",
       "if False:", "vectors", "vectors"),
    _m("dv-tight-bounds-unchecked", "a DML add with a deletion vector may claim tight bounds",
       "DV.ADD_CHECKS",
       'if stats.get("tightBounds") is True and txn.operation_name in TIGHT_BOUNDS_FORBIDDEN:',
       "if False:", "vectors", "vectors"),
)  # fmt: skip

LOG: tuple[Mutant, ...] = (
    _m("put-if-absent-by-exists-then-write", "put-if-absent checks existence, then writes",
       "LOG.PUT_IF_ABSENT",
       "kind = crashpoints.file_kind(name)",
       "if os.path.exists(final):\n        raise self._exists_error(name)\n"
       "    with open(final, 'wb') as file:\n        file.write(data)\n    return", "race"),
    _m("earliest-version-is-oldest-commit", "time travel may start at the oldest listed commit "
       "even when no checkpoint covers it", "SNAPSHOT.TIME_TRAVEL",
       "starts = [*self.checkpoints, *([0] if 0 in self.commits else [])]",
       "starts = [*self.checkpoints, *self.commits]",
       function="log.listing:LogListing.earliest_version"),
    _m("multi-part-checkpoint-missing-part", "a multi-part checkpoint with a part missing counts "
       "as complete", "CHECKPOINT.READ",
       "if len(present) == total:", "if present:", "vectors", "vectors",
       function="log.listing:_complete_checkpoints"),
    _m("empty-checkpoint-file-listed", "a zero-length checkpoint file counts as a checkpoint",
       "CHECKPOINT.READ",
       "if name is None or info.size <= 0:", "if name is None or info.size < 0:",
       function="log.listing:_complete_checkpoints"),
    _m("multi-part-last-part-stands-for-all", "a multi-part checkpoint whose last part exists "
       "counts as complete (parts are written in order)", "CHECKPOINT.READ",
       "if len(present) == total:\n"
       "            ordered = tuple(present[i] for i in range(1, total + 1))",
       "if total in present:\n            ordered = tuple(present[i] for i in sorted(present))",
       "vectors", "vectors", function="log.listing:_complete_checkpoints"),
    _m("multi-part-counts-mixed", "the part files of a version are counted whatever part "
       "count their names give", "CHECKPOINT.READ",
       "if len(present) == total:\n"
       "            ordered = tuple(present[i] for i in range(1, total + 1))",
       "same_version = [f for (v, _), ps in parts.items() if v == version for f in ps.values()]\n"
       "        if len(same_version) >= total:\n"
       "            ordered = tuple(sorted(same_version, key=lambda f: f.name))",
       "vectors", "vectors", function="log.listing:_complete_checkpoints"),
    _m("commit-name-any-unicode-digit", "a commit name's version may be any Unicode digits",
       "LOG.COMMIT_FILE_NAME", "if _COMMIT.fullmatch(name) is None:",
       'if re.fullmatch(r"\\d{20}\\.json", name) is None:', "vectors", "vectors",
       function="log.names:parse_commit_name"),
    _m("latest-version-from-versioned-files", "the latest version is the highest version a "
       "commit, checkpoint or checksum file name carries", "LOG.LISTING",
       "return max([*self.commits, *self.checkpoints], default=-1)",
       "return max([*self.commits, *self.checkpoints, *(\n"
       "            int(f.name[:20]) for f in self.files\n"
       '            if f.name[:20].isdigit() and f.name.endswith((".json", ".crc", ".parquet"))\n'
       "        )], default=-1)",
       "vectors", "vectors", function="log.listing:LogListing.latest_version"),
    _m("last-checkpoint-parts-out-of-order", "_last_checkpoint writes parts after sizeInBytes",
       "CHECKPOINT.LAST_CHECKPOINT",
       '    if parts is not None:\n        content["parts"] = parts\n'
       '    content["sizeInBytes"] = size_in_bytes\n',
       '    content["sizeInBytes"] = size_in_bytes\n'
       '    if parts is not None:\n        content["parts"] = parts\n', "services",
       function="log.last_checkpoint:encode_last_checkpoint"),
)  # fmt: skip

REPLAY: tuple[Mutant, ...] = (
    _m("replay-keeps-first-add", "replay keeps the first add of a re-added path",
       "SNAPSHOT.RECONCILE",
       "adds.pop(key, None)\n                adds[key] = action",
       "adds.setdefault(key, action)", "vectors"),
    _m("remove-keeps-earlier-add", "a remove does not drop an add of the same replay window",
       "SNAPSHOT.RECONCILE",
       "adds.pop(key, None)\n                removes.pop(key, None)",
       "removes.pop(key, None)"),
    _m("re-add-keeps-tombstone", "a re-added file keeps its tombstone",
       "SNAPSHOT.RECONCILE",
       "key = action.key\n                removes.pop(key, None)\n",
       "key = action.key\n",
       "vectors", "vectors"),
    _m("tombstone-dropped-by-path", "a file key touched by a commit drops the tombstone of the "
       "same path without a deletion vector", "SNAPSHOT.FILE_KEY",
       "state.tombstones = drop_keys(state.tombstones, touched)",
       "state.tombstones = drop_keys(state.tombstones, touched | {(p, None) for p, _ in touched})",
       function="replay.commits:reconcile"),
    _m("re-add-keeps-older-tombstone", "a file re-added after the version that removed it keeps "
       "the tombstone", "SNAPSHOT.RECONCILE",
       "state.tombstones = drop_keys(state.tombstones, touched)",
       "state.tombstones = drop_keys(state.tombstones, set(removes))",
       function="replay.commits:reconcile"),
    _m("domain-removal-ignored", "a removed metadata domain stays live",
       "SNAPSHOT.DOMAIN_METADATA", "if action.removed:", "if False:"),
    _m("app-txn-first-wins", "the first SetTransaction of an app id wins, not the latest",
       "SNAPSHOT.APP_TXN", "self.txns[action.app_id] = action",
       "self.txns.setdefault(action.app_id, action)"),
    _m("checkpoint-txn-loses-last-updated", "a checkpoint's txn rows are read without "
       "lastUpdated", "CHECKPOINT.READ",
       'last_updated=row.get("lastUpdated")', "last_updated=None", "services", "services",
       function="replay.checkpoint_reader:_txn"),
    _m("checkpoint-configuration-dropped", "a checkpoint's metaData is read without its "
       "configuration", "CHECKPOINT.READ",
       'configuration={k: v for k, v in (row.get("configuration") or ())}', "configuration={}",
       "vectors", "machine",
       function="replay.checkpoint_reader:_metadata"),
    _m("checkpoint-first-part-only", "only the first part of a multi-part checkpoint is read",
       "CHECKPOINT.READ",
       "for info in cp.files:", "for info in cp.files[:1]:", "vectors", "vectors",
       function="replay.checkpoint_reader:_read_checkpoint_files"),
    _m("compaction-read-as-last-commit", "a log compaction file's range is replayed as its "
       "last commit alone", "LOG.COMPACTION",
       "yield last, compaction_name(first, last), read_compaction(store, first, last)",
       "yield last, commit_name(last), read_commit(last)",
       function="replay.compaction:replay_commits"),
)  # fmt: skip

CHECKPOINT: tuple[Mutant, ...] = (
    _m("tombstone-dropped-early", "the checkpoint drops tombstones still within retention",
       "CHECKPOINT.CONTENTS",
       "snapshot.tombstones_table(now_ms)",
       "snapshot.tombstones_table(now_ms + snapshot.deleted_file_retention_ms)", "services"),
    _m("checkpoint-keeps-expired-txns", "the checkpoint keeps expired SetTransactions",
       "CHECKPOINT.CONTENTS", "snapshot.app_transactions_at(now_ms).values()",
       "snapshot.all_app_transactions.values()", "services", "services"),
    _m("checkpoint-omits-domains", "the checkpoint leaves out domain metadata",
       "CHECKPOINT.CONTENTS",
       '        *(("domainMetadata", _domain_row(d)) for d in domains),\n', "", "services"),
    _m("checkpoint-at-version-zero", "version 0 counts as a multiple of the interval",
       "CHECKPOINT.INTERVAL",
       "return version != 0 and version % checkpoint_interval(metadata) == 0",
       "return version % checkpoint_interval(metadata) == 0", "machine"),
    _m("checkpoint-interval-off-by-one", "the checkpoint comes one commit before the interval",
       "CHECKPOINT.INTERVAL", "version % checkpoint_interval(metadata) == 0",
       "(version + 1) % checkpoint_interval(metadata) == 0", "vectors"),
    _m("checkpoint-parts-numbered-from-zero", "multi-part checkpoint parts are numbered from 0",
       "CHECKPOINT.CONTENTS", "part_checkpoint_name(version, i + 1, parts)",
       "part_checkpoint_name(version, i, parts)", "services", "services",
       function="checkpoint.write:_pieces"),
    _m("checkpoint-empty-parts-skipped", "a part of a multi-part checkpoint that would hold "
       "no rows is not written", "CHECKPOINT.CONTENTS",
       "for i in range(parts)\n    ]",
       "for i in range(parts)\n        if pc.any(pc.equal(assignment, i)).as_py()\n    ]",
       "services", "services", function="checkpoint.write:_pieces"),
    _m("last-checkpoint-without-parts", "_last_checkpoint of a multi-part checkpoint has no "
       "parts", "CHECKPOINT.LAST_CHECKPOINT", "parts=written_parts,", "parts=None,",
       "services", "services", function="checkpoint.write:_write_v1"),
    _m("last-checkpoint-counts-all-rows", "_last_checkpoint.numOfAddFiles counts every row",
       "CHECKPOINT.LAST_CHECKPOINT",
       "num_of_add_files=snapshot.num_files", "num_of_add_files=table.num_rows", "services",
       function="checkpoint.write:_write_v1"),
    _m("last-checkpoint-before-parts", "_last_checkpoint is written before the checkpoint",
       "CHECKPOINT.LAST_CHECKPOINT",
       "    total, reused = _put_pieces(store, pieces)\n",
       "    write_last_checkpoint(store, encode_last_checkpoint(\n"
       "        version, table.num_rows, written_parts, 0, snapshot.num_files))\n"
       "    total, reused = _put_pieces(store, pieces)\n", "services",
       function="checkpoint.write:_write_v1"),
    _m("cleanup-cutoff-not-at-midnight", "log cleanup's cutoff is not truncated to midnight",
       "RETENTION.LOG", "cutoff -= cutoff % DAY_MS", "pass", "services", "services"),
    _m("cleanup-deletes-new-start", "log cleanup deletes the checkpoint it keeps as the start",
       "RETENTION.LOG", "entries[:keep_from]", "entries[:keep_from + 1]", "vectors", "services"),
    _m("checkpoint-protection-blocks-chunks", "a cleanup that creates no checkpoint is held "
       "to checkpointProtection's one-go truncation", "RETENTION.CHECKPOINT_PROTECTION",
       "or profile.has(\"checkpoint_protection_chunked_cleanup\")", "", "services", "services"),
    _m("checkpoint-protection-unknown", "a table listing checkpointProtection is refused for "
       "writing", "RETENTION.CHECKPOINT_PROTECTION",
       "features=support.features & WRITER_FEATURES)",
       "features=support.features & (WRITER_FEATURES - {'checkpointProtection'}))",
       function="table.features:require_writable"),
    _m("writer-protocol-read-unchecked", "a table whose protocol the release cannot write is "
       "written", "TXN.WRITER_PROTOCOL",
       "    if txn.read_protocol is not None:\n        protocol.require_writable(",
       "    if False:\n        protocol.require_writable(",
       function="txn.prepare:check_writer_protocol"),
    _m("writer-protocol-new-checked-early", "a protocol a commit sets is checked before 3.1.0 too",
       "TXN.WRITER_PROTOCOL", "    if profile.has(\"new_protocol_write_check\"):",
       "    if True:", function="txn.prepare:check_writer_protocol"),
    _m("writer-protocol-winner-unchecked", "a winner's protocol the release cannot write is "
       "adopted", "TXN.WRITER_PROTOCOL",
       "    if profile.has(\"winner_protocol_write_check\"):", "    if False:",
       function="txn.conflicts:check_protocol"),
    _m("writer-protocol-release-blind", "the writer takes every feature it implements, whatever "
       "the release", "TXN.WRITER_PROTOCOL",
       "support = writer_support(profile.release)",
       "support = writer_support((99, 0, 0))",
       function="table.features:require_writable"),
    _m("cleanup-cutoff-exclusive", "a file exactly at the cutoff is not expired",
       "RETENTION.LOG",
       "and entries[index - 1][2] <= cutoff", "and entries[index - 1][2] < cutoff",
       "services", "services",
       function="retention.log_cleanup:_new_start"),
    _m("cleanup-trusts-unread-checkpoint", "log cleanup does not read the new start back first",
       "RETENTION.VERIFIED_CHECKPOINT",
       "and _readable(log, listing.checkpoints[version])", "", "vectors",
       function="retention.log_cleanup:_new_start"),
    _m("v2-checkpoint-names-no-sidecar", "a v2 checkpoint's top-level file leaves out its "
       "sidecar action", "CHECKPOINT.V2_WRITE",
       "codec.encode_commit([marker, sidecar, *others])", "codec.encode_commit([marker, *others])",
       function="checkpoint.v2:write_v2_checkpoint"),
    _m("cleanup-times-not-monotonic", "log cleanup takes file times as they are, not made "
       "increasing", "RETENTION.LOG",
       "if previous is not None and time <= previous:", "if False:", "services", "services",
       function="retention.log_cleanup:_timed_entries"),
)  # fmt: skip

SERVICES: tuple[Mutant, ...] = (
    _m("tombstone-expiry-inclusive", "a tombstone exactly at the cutoff is kept",
       "RETENTION.TOMBSTONES", "pc.greater(stamps,", "pc.greater_equal(stamps,",
       "services", "services", function="snapshot.state:Snapshot.tombstones_table"),
    _m("app-txn-expiry-inclusive", "a SetTransaction exactly at the cutoff is kept",
       "RETENTION.SET_TRANSACTION",
       "txn.last_updated > cutoff", "txn.last_updated >= cutoff", "services", "services"),
    _m("app-txn-without-last-updated-kept", "a SetTransaction without lastUpdated never expires",
       "RETENTION.SET_TRANSACTION",
       "if txn.last_updated is not None and txn.last_updated > cutoff",
       "if txn.last_updated is None or txn.last_updated > cutoff", "vectors", "vectors"),
    _m("version-at-timestamp-exclusive", "a timestamp equal to a commit's resolves to the one "
       "before", "SNAPSHOT.TIME_TRAVEL", "if t <= timestamp_ms]", "if t < timestamp_ms]",
       "vectors", "services",
       function="snapshot.time_travel:version_at"),
    _m("commit-times-equal-kept", "equal commit file times are not made increasing",
       "SNAPSHOT.TIME_TRAVEL", "moment <= previous:", "moment < previous:",
       "services", "services",
       function="snapshot.timestamps:commit_timestamps"),
    _m("in-commit-timestamps-ignored", "time travel uses file times despite in-commit "
       "timestamps", "ICT.TIME_TRAVEL", "if ict is not None:", "if False:",
       "vectors", "services",
       function="snapshot.timestamps:commit_timestamps"),
    _m("vacuum-ignores-tombstones", "VACUUM deletes files whose tombstones are within retention",
       "RETENTION.TOMBSTONES", "if tombstones.num_rows:", "if False:", "services",
       function="retention.vacuum:_referenced"),
    _m("vacuum-ignores-recent-removes", "VACUUM ignores removes committed after the cutoff",
       "RETENTION.TOMBSTONES",
       "if version > snapshot.version or info.modification_time <= cutoff:", "if True:",
       "services", "services",
       function="retention.vacuum:_referenced"),
    _m("vacuum-ignores-deletion-vectors", "VACUUM deletes the deletion-vector files of live "
       "files", "PATH.DATA_FILE",
       "if dv is not None and (dv_path := deletion_vector_path(root, dv)) is not None:",
       "if False and (dv_path := deletion_vector_path(root, dv)) is not None:", "services",
       function="retention.vacuum:_referenced"),
    _m("vacuum-retention-not-enforced", "VACUUM accepts a retention shorter than the table's",
       "RETENTION.TOMBSTONES", "if enforce_retention and retention < configured:",
       "if False:", "services",
       function="retention.vacuum:_retention"),
    _m("vacuum-deletes-at-cutoff", "VACUUM deletes a file modified exactly at the cutoff",
       "RETENTION.TOMBSTONES", "if info.st_mtime_ns // 1_000_000 >= cutoff:",
       "if info.st_mtime_ns // 1_000_000 > cutoff:", "services", "services",
       function="retention.vacuum:_consider"),
)  # fmt: skip

TABLE: tuple[Mutant, ...] = (
    _m("checkpoint-cadence-by-read-interval", "the checkpoint interval is the one the writer "
       "read, not the one it commits", "CHECKPOINT.INTERVAL",
       "post_commit(self.log, version, prepared.current.metadata, self.clock)",
       "post_commit(self.log, version, None if self.snapshot is None else "
       "self.snapshot.metadata, self.clock)",
       function="txn.transaction:OptimisticTransaction._commit"),
    _m("checkpoint-cadence-keeps-default", "a table that set its interval is still "
       "checkpointed every 10 versions too", "CHECKPOINT.INTERVAL",
       "not checkpoint_policy.needs_checkpoint(version, metadata)",
       "not (checkpoint_policy.needs_checkpoint(version, metadata) or version % 10 == 0)",
       function="txn.post_commit:post_commit"),
    _m("checkpoint-interval-zero-accepted", "delta.checkpointInterval = 0 is accepted",
       "CHECKPOINT.INTERVAL",
       "if not 0 < number < 2**31:", "if not 0 <= number < 2**31:", "vectors", "vectors",
       function="table.properties:checkpoint_interval"),
    _m("boolean-property-case-sensitive", "a boolean table property must be lower case",
       "TXN.TABLE_PROPERTIES",
       "lowered = value.strip().lower()", "lowered = value.strip()",
       function="table.properties:flag"),
    _m("isolation-level-case-sensitive", "delta.isolationLevel must match its case exactly",
       "ISOLATION.TABLE_DEFAULT",
       "if value.strip().lower() == level.lower():", "if value.strip() == level:",
       function="table.properties:isolation_level"),
    _m("reader-features-unchecked", "unsupported reader features are read anyway",
       "ACTION.PROTOCOL",
       "if protocol.min_reader_version == MAX_READER_VERSION:", "if False:", "services",
       function="table.features:check_reader_protocol"),
    _m("dotdot-checked-only-leading", "only a leading '..' segment is refused in a data path",
       "PATH.DATA_FILE",
       'if ".." in decoded.split("/"):', 'if decoded.split("/")[0] == "..":'),
    _m("root-prefix-without-separator", "/table-other/x counts as inside the table /table",
       "PATH.DATA_FILE",
       'if target.startswith(root.rstrip("/") + "/"):', 'if target.startswith(root):',
       "services"),
)  # fmt: skip

CODEC: tuple[Mutant, ...] = (
    _m("path-escapes-lower-case", "add.path percent-escapes in lower-case hex",
       "ACTION.ADD", 'f"%{byte:02X}"', 'f"%{byte:02x}"', "spark",
       function="codec.paths:_percent_encode"),
    _m("path-decoded-twice", "add.path is percent-decoded twice",
       "ACTION.ADD",
       'return unquote(uri_path, errors="replace")',
       'return unquote(unquote(uri_path, errors="replace"))', "vectors", "machine",
       function="codec.paths:decode_path"),
    _m("partition-directory-unescaped", "partition values are not Hive-escaped in directories",
       "ACTION.PARTITION_VALUES",
       "{_hive_escape(value) if value else", "{value if value else", "spark",
       function="codec.paths:partition_directory"),
    _m("partition-directory-empty-string", "an empty partition value gets its own directory",
       "ACTION.PARTITION_VALUES",
       "if value else HIVE_DEFAULT_PARTITION", "if value is not None else HIVE_DEFAULT_PARTITION",
       "spark",
       function="codec.paths:partition_directory"),
    _m("partition-empty-string-not-null", 'a "" partition value is read as a value, not null',
       "ACTION.PARTITION_VALUES", 'if raw is None or raw == "":', "if raw is None:", "spark"),
    _m("partition-timestamp-offset-sign", "a timestamp partition value's zone offset is added, "
       "not subtracted", "ACTION.PARTITION_VALUES",
       "return (moment - sign * offset)", "return (moment + sign * offset)", "spark",
       function="codec.partition_values:_decode_timestamp"),
    _m("stats-nan-unquoted", "NaN and infinities are written unquoted into stats",
       "ACTION.ADD",
       "return f'\"{text}\"' if not math.isfinite(value) else text", "return text",
       "spark",
       function="codec.stats:_stats_value"),
    _m("stats-timestamp-without-millis", "timestamp stats lose their milliseconds",
       "ACTION.ADD",
       "text = f\"{datetime_text(value, 'T')}.{value.microsecond // 1000:03d}\"",
       "text = datetime_text(value, 'T')", "spark",
       function="codec.stats:_stats_value"),
    _m("two-actions-on-a-line", "a log line holding two actions is accepted",
       "ACTION.UNKNOWN", "if found is not None:", "if False:"),
)  # fmt: skip

SPARK: tuple[Mutant, ...] = (
    _spark("skipping-le-boundary", "data skipping drops a file whose minimum equals x <= value",
           "TXN.READ_FILES", '"<=": low > v,', '"<=": low >= v,', "spark",
           function="spark.skipping:_excludes"),
    _spark("skipping-max-not-widened", "timestamp maxima are not widened by their lost "
           "microseconds", "TXN.READ_FILES",
           "value += dt.timedelta(milliseconds=1)", "pass", "spark",
           function="spark.skipping:_bound"),
    _spark("skipping-missing-null-count", "IS NULL skips a file whose nullCount is unknown",
           "TXN.READ_FILES", "return bool(nulls == 0)",
           "return nulls is None or nulls == 0", "spark",
           function="spark.skipping:_rules_out"),
    _spark("condition-literal-left-not-flipped", "'5 < x' is translated as 'x < 5'",
           "TXN.READ_PREDICATES",
           "left, right, op = right, left, _FLIPPED[op]", "left, right = right, left", "spark",
           function="spark.conditions:_translate"),
    _spark("condition-or-split", "an OR is split into conjuncts like an AND",
           "TXN.READ_PREDICATES",
           'if _kind(node) == "And":', 'if _kind(node) in {"And", "Or"}:', "spark",
           function="spark.conditions:_conjuncts"),
    _spark("dynamic-overwrite-null-partition", "dynamic overwrite reads a null partition as "
           "'= null'", "TXN.READ_PREDICATES",
           'predicates.Expr("is_null", (c,)) if v is None else predicates.Expr("=", (c, v))',
           'predicates.Expr("=", (c, v))', "spark",
           function="spark.conditions:partition_tuples_predicate"),
    _spark("dynamic-overwrite-read-not-recorded", "dynamic overwrite does not record the "
           "partitions it replaces as read", "TXN.READ_PREDICATES",
           "txn.track_read_predicate(predicate)", "pass", "spark",
           function="spark.overwrite:_partitions_written"),
    _spark("replace-where-records-whole-table", "replaceWhere over partitions records a "
           "whole-table read", "TXN.READ_PREDICATES",
           "gone = txn.filter_files(condition.filters())",
           "gone = rewrite.candidates(txn.snapshot, condition.filters())\n"
           "    txn.read_whole_table()", "spark",
           function="spark.overwrite:_partitions_matching"),
    _spark("overwrite-ignores-data-change", "an overwrite ignores dataChange=false",
           "TXN.READ_PREDICATES",
           "[rewrite.remove(f, now, data_change=change) for f in txn.filter_files()]",
           "[rewrite.remove(f, now) for f in txn.filter_files()]", "spark"),
    _spark("dml-reads-ignore-data-skipping", "DML records the partition-pruned files as read, "
           "not the data-skipped ones", "TXN.READ_FILES",
           "return txn.filter_files(filters, data_skipped=[f.path for f in chosen])",
           "return txn.filter_files(filters)", "spark"),
    _spark("delete-shortcut-skips-untranslated", "a DELETE over partition columns drops whole "
           "files though a conjunct could not be translated", "PREDICATE.PARTITION_ONLY",
           "if parsed is None or (parsed.exact and parsed.only_over(",
           "if parsed is None or (parsed.only_over(", "spark",
           function="spark.operations.delete:delete"),
    _spark("unconditional-dml-read-not-recorded", "DELETE/UPDATE without a condition records "
           "no read", "TXN.READ_WHOLE_TABLE",
           'return ConditionRead("[]", None, txn.filter_files())',
           'return ConditionRead("[]", None, list(txn.snapshot.files.values()))',
           "spark",
           function="spark.operations.command:read_condition"),
    _spark("merge-by-source-narrowed", "MERGE with NOT MATCHED BY SOURCE reads only the ON "
           "condition's files", "TXN.READ_FILES",
           "if target_only.conjuncts and not clauses.by_source else None",
           "if target_only.conjuncts else None", "spark",
           function="spark.operations.merge.filter:files_read"),
    _spark("remove-drops-partition-values", "a DML remove leaves out the file's partition "
           "values", "ACTION.REMOVE",
           "partition_values=add.partition_values,", "partition_values={},", "spark",
           function="spark.rewrite:remove"),
    _spark("compaction-adds-change-data", "compaction writes its adds with dataChange=true",
           "ACTION.ADD",
           "write_data(data, root, snapshot.metadata, data_change=False)",
           "write_data(data, root, snapshot.metadata, data_change=True)", "spark",
           function="spark.operations.compaction:compact"),
    _spark("compaction-removes-change-data", "compaction writes its removes with dataChange=true",
           "ACTION.REMOVE",
           "rewrite.remove(f, now, data_change=False, with_stats=True)",
           "rewrite.remove(f, now, data_change=True, with_stats=True)", "spark",
           function="spark.operations.compaction:compact"),
    _spark("compaction-files-not-read", "compaction does not record the files it rewrites as read",
           "TXN.READ_FILES",
           "txn.track_files_read(f.path for f in work.compacted)", "pass", "spark",
           function="spark.operations.compaction:_commit"),
    _spark("txn-version-dedup-strict", "a write whose txnVersion equals the applied one is "
           "written again", "ACTION.TXN",
           "if txn.txn_version(opts.txn_app_id) >= opts.txn_version:",
           "if txn.txn_version(opts.txn_app_id) > opts.txn_version:", "spark",
           function="spark.write:_skipped"),
    _spark("set-transaction-without-timestamp", "a write's SetTransaction has no lastUpdated",
           "ACTION.TXN",
           "SetTransaction(opts.txn_app_id, opts.txn_version, now)",
           "SetTransaction(opts.txn_app_id, opts.txn_version, None)", "spark",
           function="spark.write:commit_write"),
    _spark("stream-batch-version-off-by-one", "foreachBatch writes batch n as txnVersion n + 1",
           "ACTION.TXN",
           "txnVersion=batch_id,", "txnVersion=batch_id + 1,", "spark",
           function="spark.streaming:idempotent_writer"),
    _spark("dv-old-rows-dropped", "a new deletion vector forgets the rows the file's old vector "
           "marked", "DV.WRITE",
           "union = {f.path: old[f.path] | marked[f.path] for f in hit}",
           "union = {f.path: set(marked[f.path]) for f in hit}", "spark"),
    _spark("dv-emptied-file-kept", "a file whose every row is deleted is kept with a full "
           "deletion vector instead of removed", "DV.WRITE",
           "len(union[f.path]) >= (stats.num_records(f.stats) or 0)",
           "len(union[f.path]) > (stats.num_records(f.stats) or 0)", "spark"),
)  # fmt: skip

REAL_BUGS: tuple[Mutant, ...] = (
    _m("checkpoint-drops-files-removed-by-path", "the checkpoint leaves out a live file whose "
       "path has a tombstone (adds and removes keyed by path alone: trinodb/trino#31252, "
       "vector real-bugs/checkpoint-keeps-a-file-removed-without-its-vector)",
       "CHECKPOINT.CONTENTS",
       "    files = snapshot.files_table()\n    tombstones = snapshot.tombstones_table(now_ms)\n",
       "    tombstones = snapshot.tombstones_table(now_ms)\n"
       "    files = snapshot.files_table().filter(pa.compute.invert(pa.compute.is_in(\n"
       "        snapshot.files_table().column(\"path\"), tombstones.column(\"path\"))))\n"),
    _m("timestamp-read-in-whole-seconds", "time travel by timestamp drops the milliseconds of "
       "the time asked for (delta-io/delta-rs#1967, vector "
       "real-bugs/timestamp-read-within-one-second)", "SNAPSHOT.TIME_TRAVEL",
       "if t <= timestamp_ms]", "if t <= timestamp_ms // 1000 * 1000]",
       function="snapshot.time_travel:version_at"),
    _m("unparsable-commit-line-skipped", "a commit line that is not JSON is skipped, as "
       "delta-spark's permissive parsing did before 2.2.0 (delta-io/delta@0eb4c7e, vector "
       "real-bugs/commit-line-that-does-not-parse)", "ACTION.LINE_FORMAT",
       'raise corrupt(number, f"invalid JSON: {exc}") from None', "continue"),
    _m("cleanup-counts-any-checkpoint-file", "log cleanup takes any checkpoint file as the "
       "start of the retained log, a lone part of a multi-part checkpoint included "
       "(delta-io/delta#4146, vector real-bugs/lone-checkpoint-part-bounds-log-cleanup)",
       "RETENTION.LOG",
       "    for version in sorted(listing.checkpoints, reverse=True):\n"
       "        if version > checkpoint_version or version not in first_index:",
       "    for version in sorted(first_index, reverse=True):\n"
       "        if version > checkpoint_version:"
       "\n            continue\n"
       "        if version not in listing.checkpoints and first_index[version] > 0 and entries["
       "first_index[version] - 1][2] <= cutoff:\n            return first_index[version]\n"
       "        if version not in listing.checkpoints:",
       function="retention.log_cleanup:_new_start"),
)  # fmt: skip
"""Published bugs of Delta engines (the real-bugs vectors, spec/scenarios.md) seeded into the
impl. Three more are older entries: delete-delete-skipped (delta-io/delta#7163),
in-commit-timestamps-ignored (delta-io/delta#4294), cleanup-trusts-unread-checkpoint."""

FRESH_BATCH: tuple[Mutant, ...] = (
    _m("resolvable-keys-from-4-1", "v4.3.0's wider resolvable metadata keys from v4.1.0",
       "CONFLICT.METADATA_RESOLUTION",
       'profile.has("more_resolvable_keys")', 'profile.has("metadata_resolution")',
       SURVIVES, "vectors", function="txn.conflicts:_metadata_change_resolvable"),
    _m("duplicate-check-from-4-1", "the duplicate-action check from v4.1.0 instead of v4.3.0",
       "TXN.DUPLICATE_ACTIONS",
       'profile.has("duplicate_action_check")', 'profile.has("metadata_resolution")',
       "vectors"),
    _m("stats-struct-from-3-1", "checkpoints carry stats_parsed by default from v3.1.0, not v3.0.0",
       "CHECKPOINT.STATS_AS_STRUCT",
       'profile.has("stats_as_struct_by_default")', 'profile.has("append_shortcuts")',
       SURVIVES, "vectors"),
    _m("chunked-cleanup-from-4-1", "chunked cleanup under checkpoint protection from v4.1.0",
       "RETENTION.CHECKPOINT_PROTECTION",
       'profile.has("checkpoint_protection_chunked_cleanup")', 'profile.has("metadata_resolution")',
       "services", function="retention.log_cleanup:cleanup_may_truncate"),
    _m("object-store-create-overwrites", "the object store's put-if-absent overwrites",
       "LOG.PUT_IF_ABSENT",
       'key, bytes(data), mode="create")', 'key, bytes(data), mode="overwrite")',
       "store", function="log.object_store:ObjectLogStore.write_new"),
    _m("object-store-root-prefix-top-folder", "a nested table's keys go under its top folder",
       "PATH.TABLE_LOCATION",
       'return f"{self.prefix}/{relative}" if self.prefix else relative',
       'return f"{self.prefix.split(\'/\')[0]}/{relative}" if self.prefix else relative',
       "store", function="log.location:TableLocation.key"),
    _m("sidecar-drops-tombstones", "a v2 checkpoint's sidecar keeps adds only",
       "CHECKPOINT.V2_WRITE",
       "keep = pc.or_(pc.is_valid(adds), pc.is_valid(removes))", "keep = pc.is_valid(adds)",
       "services", function="checkpoint.v2:_sidecar_rows"),
    _m("sidecar-num-actions-counts-all", "sidecarNumActions counts every checkpoint row",
       "CHECKPOINT.V2_WRITE",
       '"sidecarNumActions": str(rows.num_rows)', '"sidecarNumActions": str(table.num_rows)',
       "services", function="checkpoint.v2:write_v2_checkpoint"),
    _m("histogram-bin-one-up", "an updated histogram counts a file one bin up",
       "CHECKSUM.WRITE",
       "index = bisect.bisect_right(BIN_BOUNDARIES, size) - 1",
       "index = min(bisect.bisect_right(BIN_BOUNDARIES, size), len(BIN_BOUNDARIES) - 1)",
       "vectors", function="checksum:updated_histogram"),
    _m("compaction-hides-last-commit", "a compaction file ending at the target hides its commit",
       "LOG.COMPACTION",
       "ends_compacted = bool(units) and units[-1][0] != units[-1][1]", "ends_compacted = False",
       "services", function="replay.compaction:replay_commits"),
    _m("dedup-from-2-3", "set transactions deduplicated from v2.3.0 instead of v2.1.0",
       "TXN.SET_TRANSACTION_DEDUP",
       'profile.has("set_transaction_dedup")', 'profile.has("empty_commit_skip")',
       "vectors"),
    _m("single-protocol-from-3-0", "at most one protocol per commit from v3.0.0, not v2.3.0",
       "TXN.SINGLE_PROTOCOL",
       'profile.has("single_protocol_check")', 'profile.has("domain_metadata")',
       "vectors"),
    _m("table-isolation-from-2-3", "delta.isolationLevel read from v2.3.0 instead of v2.1.0",
       "ISOLATION.NONE",
       'profile.has("table_isolation_property")', 'profile.has("empty_commit_skip")',
       "vectors", function="txn.transaction:OptimisticTransaction._isolation_level"),
    _m("txn-id-from-2-1", "commitInfo carries txnId from v2.1.0 instead of v1.2.0",
       "TXN.COMMIT_INFO",
       'profile.has("txn_id")', 'profile.has("table_isolation_property")',
       "vectors", function="txn.transaction:OptimisticTransaction._commit_info"),
    _spark("replace-where-follows-dynamic-mode", "replaceWhere follows the session's dynamic "
           "partition-overwrite mode", "TXN.READ_PREDICATES",
           "if opts.replace_where is not None:\n        dynamic = False", "pass", "spark",
           function="spark.options:dynamic_partition_overwrite"),
    _spark("timestamp-ignores-session-zone", "a timestamp without offset is read in UTC",
           "SNAPSHOT.TIME_TRAVEL",
           'moment = moment.replace(tzinfo=zoneinfo.ZoneInfo(str(zone or "UTC")))',
           "moment = moment.replace(tzinfo=dt.timezone.utc)", "spark",
           function="spark.read:parse_timestamp"),
    _spark("dv-bounds-stay-tight", "a file given a deletion vector keeps tightBounds true",
           "DV.WRITE", 'parsed["tightBounds"] = False', 'parsed["tightBounds"] = True',
           "spark", function="spark.deletion_vectors:loose_stats"),
)  # fmt: skip
"""A fresh batch written on 2026-12-02 (issue 55) before reading the rest of the catalog, in
areas its earlier entries do not cover: release boundaries, the object store, v2 checkpoints'
sidecars, the checksum's histogram, log compaction and Spark session settings."""

CATALOG: tuple[Mutant, ...] = (
    *CONFLICTS, *TRANSACTION, *LOG, *REPLAY, *CHECKPOINT, *SERVICES, *TABLE, *CODEC, *SPARK,
    *REAL_BUGS, *FRESH_BATCH,
)  # fmt: skip


def _by_rule(mutants: tuple[Mutant, ...]) -> dict[str, tuple[Mutant, ...]]:
    rules = sorted({m.rule for m in mutants})
    return {rule: tuple(m for m in mutants if m.rule == rule) for rule in rules}


BY_RULE: dict[str, tuple[Mutant, ...]] = _by_rule(CATALOG)
"""The catalog keyed by the rule each mutant breaks."""
