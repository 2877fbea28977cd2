"""spec/data/releases.json is the one source of release behaviour: the README table is its
rendering, and the model and the impl ask it the same questions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deltaspec.impl.table.releases import CURRENT
from deltaspec.impl.table.releases import Profile as ImplProfile
from deltaspec.model.profiles import LATEST
from deltaspec.model.profiles import Profile as ModelProfile
from deltaspec.releases_table import (
    behaviours,
    described_releases,
    latest_release,
    profile_rows,
    render_table,
    with_table,
)
from deltaspec.rules import covers, load_rules, spec_root

ROOT = Path(__file__).resolve().parents[2]
ASKED = re.compile(r'\.has\("([a-z0-9_]+)"\)')


def test_the_readme_table_is_what_releases_json_renders() -> None:
    readme = (spec_root() / "README.md").read_text(encoding="utf-8")
    assert render_table() in readme
    assert with_table(readme) == readme, "run: python -m deltaspec.releases_table"


def _range(cell: str) -> str:
    """A row's release cell as a Releases: line (``v1.1.x`` is ``v1.1.0–v1.1.x``)."""
    return f"{cell[:-1]}0–{cell}" if cell.endswith(".x") and "–" not in cell else cell


def test_the_profile_rows_cover_every_described_release_once_in_order() -> None:
    rows = profile_rows()
    owners = [
        [i for i, row in enumerate(rows) if covers(_range(row["releases"]), release)]
        for release in described_releases()
    ]
    assert all(len(owner) == 1 for owner in owners), owners
    flat = [owner[0] for owner in owners]
    assert flat == sorted(flat) and set(flat) == set(range(len(rows)))


def test_behaviours_cite_real_rules_and_described_releases() -> None:
    rule_ids = {r.id for r in load_rules()}
    releases = set(described_releases())
    for behaviour in behaviours().values():
        assert set(behaviour.rules) <= rule_ids, behaviour.name
        assert behaviour.since in releases, behaviour.name
        assert behaviour.until is None or behaviour.until in releases, behaviour.name
    assert latest_release() == max(releases)


@pytest.mark.parametrize("side", ["model", "impl"])
def test_each_side_asks_for_every_behaviour_by_its_one_name(side: str) -> None:
    asked = {
        name
        for path in (ROOT / side).rglob("*.py")
        for name in ASKED.findall(path.read_text(encoding="utf-8"))
    }
    assert asked == set(behaviours()), asked ^ set(behaviours())


def test_model_and_impl_profiles_agree_release_by_release() -> None:
    assert ModelProfile().release == ImplProfile().release == LATEST
    assert ImplProfile.parse().release == LATEST and str(ImplProfile()) == CURRENT
    for release in described_releases():
        model, impl = ModelProfile(release=release), ImplProfile(release=release)
        for name in behaviours():
            assert model.has(name) == impl.has(name), (release, name)
