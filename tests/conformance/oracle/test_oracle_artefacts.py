"""The services stage's oracle of the modern-feature artefacts (conformance/oracle/artefacts.py,
dv_adds.py): each comparison passes on what the impl writes and fails on a wrong artefact, and the
stage kills seeded bugs of each kind."""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deltaspec.checksum_bins import bin_boundaries
from deltaspec.conformance.oracle import artefacts, services
from deltaspec.conformance.oracle.catalog import Mutant
from deltaspec.conformance.oracle.dv_adds import run_dv_adds
from deltaspec.conformance.oracle.mutation import apply
from deltaspec.impl import checksum as impl_checksum
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.log.names import compaction_name
from deltaspec.model.checksum import file_size_histogram


def test_the_impl_takes_the_histogram_bins_from_the_spec_data() -> None:
    assert bin_boundaries() == impl_checksum.BIN_BOUNDARIES


sizes = st.lists(
    st.one_of(
        st.sampled_from(bin_boundaries()),
        st.sampled_from(bin_boundaries()[1:]).map(lambda b: b - 1),
        st.integers(0, 2**50),
    ),
    max_size=30,
)


@pytest.mark.rules("CHECKSUM.WRITE")
@given(sizes, sizes)
def test_the_impls_incremental_histogram_ends_where_the_models_full_count_does(
    before: list[int], added: list[int]
) -> None:
    """A writer that updates the previous version's histogram by the files a commit removed
    and added must land on the model's count of the files left."""
    removed = before[: len(before) // 2]
    updated = impl_checksum.updated_histogram(
        impl_checksum.file_size_histogram(before), removed, added
    )
    want = file_size_histogram(before[len(before) // 2 :] + added)
    assert updated == {
        "sortedBinBoundaries": list(want.sorted_bin_boundaries),
        "fileCounts": list(want.file_counts),
        "totalBytes": list(want.total_bytes),
    }


@pytest.mark.rules("CHECKSUM.WRITE")
def test_a_checksum_one_bin_off_is_a_mismatch(tmp_path: Path) -> None:
    table = services.build_table(tmp_path / "t", 0)
    model_at = services._model_at(table)
    version = len(table.times) - 1
    impl_checksum.write_checksum(table.log(), version)
    stored = json.loads(table.store.read(impl_checksum.checksum_name(version)))
    model = model_at(version)
    want = artefacts.expected_checksum(model, artefacts.commit_info(table.lines[version], model))
    assert artefacts.checksum_mismatches(stored, want, model) == []
    counts = stored["fileSizeHistogram"]["fileCounts"]
    moved = next(i for i, n in enumerate(counts) if n)
    counts[moved] -= 1
    counts[moved + 1] += 1
    wrong = artefacts.checksum_mismatches(stored, want, model)
    assert [w.split(":")[0] for w in wrong] == ["fileSizeHistogram"]


@pytest.mark.rules("CHECKPOINT.V2_WRITE", "CHECKPOINT.LAST_CHECKPOINT")
def test_a_v2_checkpoint_is_judged_by_its_sidecar_and_hint(tmp_path: Path) -> None:
    table = services.build_table(tmp_path / "t", 4)
    assert table.v2
    version, now = table.checkpoints[-1], table.times[table.checkpoints[-1]]
    log = table.log()
    result = write_checkpoint(log, log.snapshot(version), now_ms=now)
    model = services.model_snapshot(table, version)
    hint = json.loads(table.store.read("_last_checkpoint"))
    artefacts.check_v2_checkpoint(table, result.files, model, now, hint)
    with pytest.raises(artefacts.Mismatch, match="_last_checkpoint"):
        artefacts.check_v2_checkpoint(table, result.files, model, now, hint | {"size": 1})
    with pytest.raises(artefacts.Mismatch, match="sidecarNumActions"):  # a tombstone kept then
        artefacts.check_v2_checkpoint(table, result.files, model, now - 10**9, hint)


@pytest.mark.rules("LOG.COMPACTION")
def test_a_compaction_file_that_loses_a_remove_is_caught(tmp_path: Path) -> None:
    table = services.build_table(tmp_path / "t", 0)
    model_at = services._model_at(table)
    assert artefacts.check_compaction_reads(table, model_at, table.compactions) > 0
    first, last = table.compactions[0]
    name = compaction_name(first, last)
    lines = table.store.read(name).decode().splitlines()
    kept = [line for line in lines if '"remove"' not in line]
    assert kept != lines
    (table.log_dir / name).write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
    with pytest.raises(artefacts.Mismatch, match=r"tombstones|files"):
        artefacts.check_compaction_reads(table, model_at, table.compactions)


@pytest.mark.rules("DV.WRITE", "DV.ADD_CHECKS")
def test_the_deletion_vector_adds_agree_with_the_model(tmp_path: Path) -> None:
    touched = run_dv_adds(tmp_path, rounds=6)  # pyspark: a dev dependency
    assert touched is not None and touched > 0


ARTEFACT_BUGS = [
    Mutant("sidecar-drops-removes", "", "CHECKPOINT.V2_WRITE",
           "keep = pc.or_(pc.is_valid(adds), pc.is_valid(removes))", "keep = pc.is_valid(adds)",
           "services", function="checkpoint.v2:_sidecar_rows"),
    Mutant("histogram-update-one-bin-up", "", "CHECKSUM.WRITE",
           "index = bisect.bisect_right(BIN_BOUNDARIES, size) - 1",
           "index = bisect.bisect_left(BIN_BOUNDARIES, size)", "services",
           function="checksum:updated_histogram"),
    Mutant("compaction-hides-last-commit", "", "LOG.COMPACTION",
           "ends_compacted = bool(units) and units[-1][0] != units[-1][1]",
           "ends_compacted = False", "services", function="replay.compaction:replay_commits"),
    Mutant("dv-add-keeps-tight-bounds", "", "DV.WRITE", 'parsed["tightBounds"] = False',
           'parsed["tightBounds"] = True', "services", "spark",
           function="spark.deletion_vectors:loose_stats"),
]  # fmt: skip


def _services_in_child(mutant: Mutant) -> bool:
    apply(mutant)
    return services.run_services(scenarios=4).passed


@pytest.mark.parametrize("mutant", ARTEFACT_BUGS, ids=lambda m: m.id)
def test_the_services_stage_catches_artefact_bugs(mutant: Mutant) -> None:
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        assert pool.submit(_services_in_child, mutant).result() is False
