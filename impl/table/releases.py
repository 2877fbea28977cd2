"""Which delta-spark release's commit rules the production path follows (spec/README.md, release
profiles).

Which release has which behaviour is read from spec/data/releases.json, the one source the
model reads too; ``Profile.has`` answers "does the configured release have behaviour X".
"""

from __future__ import annotations

from dataclasses import dataclass

from deltaspec.releases_table import behaviours, latest_release, parse_release

CURRENT = ".".join(str(part) for part in latest_release())


@dataclass(frozen=True)
class Profile:
    """A delta-spark release number plus the session confs that shape committing."""

    release: tuple[int, int, int] = latest_release()
    max_commit_attempts: int = 10_000_000
    skip_recording_empty_commits: bool = True

    @classmethod
    def parse(cls, text: str = CURRENT, **confs: int | bool) -> Profile:
        return cls(parse_release(text), **confs)  # type: ignore[arg-type]

    def has(self, behaviour: str) -> bool:
        """Whether this release has ``behaviour`` (a name in spec/data/releases.json)."""
        return behaviours()[behaviour].holds_in(self.release)

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.release)
