"""The corpus as one parametrised test (see deltaspec.pytest_plugin):

pytest --deltaspec-adapter ADAPTER --pyargs deltaspec.pytest_corpus
"""

from __future__ import annotations

from .pytest_plugin import Case


def test_vector(deltaspec_case: Case) -> None:
    deltaspec_case.check()
