"""The deltaspec pytest plugin (``pytest11`` entry point): the conformance corpus as
parametrised tests against any adapter.

    pytest --deltaspec-adapter "cmd:./my-bridge" --pyargs deltaspec.pytest_corpus

Every scenario vector (and, for adapters that read tables on disk, every log vector) becomes one
test, named by its id; a vector the adapter declines is skipped with its reason, a failing one
fails with its divergences and the rule it breaks. ``--deltaspec-strict`` makes spurious
conflicts and wrong conflict kinds fail too. Without ``--deltaspec-adapter`` the plugin adds
nothing but its options.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest

OPTION = "--deltaspec-adapter"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("deltaspec", "deltaspec conformance corpus")
    group.addoption(OPTION, metavar="ADAPTER",
                    help="run the deltaspec corpus against this adapter (model, impl, deltars, "
                    "spark or cmd:PROGRAM)")  # fmt: skip
    group.addoption("--deltaspec-strict", action="store_true",
                    help="spurious conflicts and wrong conflict kinds fail too")  # fmt: skip


@dataclass
class Case:
    """One vector of the corpus, run against the session's adapter by ``check()``."""

    kind: str  # "scenario" | "log"
    vector: Any
    session: _Session

    def check(self) -> None:
        result = self.session.run(self)
        from deltaspec.conformance.harness.verdicts import (  # lazy: pytest start-up (1 s)
            Verdict,
        )

        if result.verdict is Verdict.SKIPPED:
            pytest.skip(result.details[0] if result.details else "declined")
        if result.fails(self.session.strict):
            rule = result.rules[0] if result.rules else "?"
            lines = [f"{result.verdict.value} (rule {rule}: deltaspec spec {rule})",
                     *result.details]  # fmt: skip
            pytest.fail("\n".join(lines), pytrace=False)


class _Session:
    def __init__(self, adapter: str, strict: bool) -> None:
        self.adapter, self.strict = adapter, strict
        self._stack = ExitStack()
        self._factory: Any = None
        self._reader: Any = None
        self._reader_ready = False
        self._known: Any = None

    def run(self, case: Case) -> Any:
        """The case's verdict, with the adapter's known issues applied (verdicts.py)."""
        from deltaspec.conformance.harness.verdicts import (  # lazy: pytest start-up (1 s)
            apply_known,
            load_known_issues,
        )

        if self._known is None:
            self._known = load_known_issues(self.adapter)
        (result,) = apply_known([self._run(case)], self._known)
        return result

    def _run(self, case: Case) -> Any:
        from deltaspec.conformance.harness.verdicts import (  # lazy: pytest start-up (1 s)
            CaseResult,
            Verdict,
        )

        if case.kind == "log":
            reader = self.reader()
            if reader is None:
                why = f"{self.adapter} cannot read tables on disk (no read_table)"
                return CaseResult(case.vector.id, Verdict.SKIPPED, (why,))
            from deltaspec.conformance.harness.logvectors import (  # lazy: pytest start-up (1 s)
                run_log_vector,
            )

            return run_log_vector(reader, case.vector)
        from deltaspec.conformance.engines.registry import (  # lazy: pytest start-up (1 s)
            adapter_factory,
        )
        from deltaspec.conformance.harness.suites import (  # lazy: pytest start-up (1 s)
            run_scenario_suite,
        )

        if self._factory is None:
            self._factory = self._stack.enter_context(adapter_factory(self.adapter))
        (result,) = run_scenario_suite(self._factory, [case.vector])
        return result

    def reader(self) -> Any:
        if not self._reader_ready:
            from deltaspec.conformance.engines.registry import (  # lazy: pytest start-up (1 s)
                table_reader,
            )

            self._reader = self._stack.enter_context(table_reader(self.adapter))
            self._reader_ready = True
        return self._reader

    def close(self) -> None:
        self._stack.close()


def _cases(config: pytest.Config) -> Iterator[Any]:
    from deltaspec.conformance.harness.logvectors import (  # lazy: pytest start-up (1 s)
        load_log_vectors,
    )
    from deltaspec.conformance.harness.scenarios import (  # lazy: pytest start-up (1 s)
        load_scenarios,
    )

    session = config.stash[_SESSION]
    for scenario in load_scenarios():
        yield pytest.param(Case("scenario", scenario, session), id=scenario.id)
    for vector in load_log_vectors():
        yield pytest.param(Case("log", vector, session), id=f"log:{vector.id}")


_SESSION = pytest.StashKey[_Session]()


def pytest_configure(config: pytest.Config) -> None:
    adapter = config.getoption(OPTION)
    if adapter:
        config.stash[_SESSION] = _Session(adapter, config.getoption("--deltaspec-strict"))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION in config.stash:
        config.stash[_SESSION].close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "deltaspec_case" not in metafunc.fixturenames:
        return
    if _SESSION not in metafunc.config.stash:
        skip = pytest.mark.skip(reason=f"no {OPTION} given")
        metafunc.parametrize("deltaspec_case", [pytest.param(None, marks=skip)], ids=["corpus"])
        return
    metafunc.parametrize("deltaspec_case", list(_cases(metafunc.config)))
