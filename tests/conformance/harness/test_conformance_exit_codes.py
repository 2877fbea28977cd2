"""One exit-code table for every suite (harness/gate.py EXIT_CODES: README, docs/conformance.md
and ``deltaspec conformance --help`` state it)."""

from __future__ import annotations

import sys

import pytest

from deltaspec.cli import main
from deltaspec.conformance.harness.gate import EXIT_CODES, EXIT_NO_CASE, EXIT_SETUP
from deltaspec.extras import install_hint

SUITES = ("scenarios", "fixtures", "logs")


@pytest.mark.parametrize("suite", SUITES)
def test_an_unknown_adapter_is_a_set_up_error_in_every_suite(suite, capsys, fixtures_dir):
    code = main(["conformance", "--adapter", "nosuch", "--suite", suite,
                 "--fixtures", str(fixtures_dir)])  # fmt: skip
    assert code == EXIT_SETUP == 2
    assert "unknown adapter 'nosuch'" in capsys.readouterr().err


@pytest.mark.parametrize("suite", SUITES)
def test_a_case_pattern_matching_nothing_is_its_own_error(suite, capsys, fixtures_dir):
    code = main(["conformance", "--adapter", "impl", "--suite", suite, "--fixtures",
                 str(fixtures_dir), "--case", "no/such/case*"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == EXIT_NO_CASE == 4
    assert f"--case 'no/such/case*' matched no case of the suites run ({suite})" in err


def test_a_case_pattern_that_matches_runs_as_before(fixtures_dir):
    code = main(["conformance", "--adapter", "impl", "--suite", "fixtures", "--fixtures",
                 str(fixtures_dir), "--case", "fixtures/golden-basic-update/*"])  # fmt: skip
    assert code == 0


@pytest.mark.parametrize("suite", SUITES)
def test_a_missing_extra_is_one_message_naming_it_in_every_suite(
    suite, capsys, monkeypatch, fixtures_dir
):
    """deltalake made unimportable: one line on stderr, naming the extra, before any case."""
    monkeypatch.setitem(sys.modules, "deltalake", None)
    for name in [m for m in sys.modules if m.startswith("deltaspec.conformance.engines.deltars")]:
        monkeypatch.delitem(sys.modules, name)
    code = main(["conformance", "--adapter", "deltars", "--suite", suite, "--fixtures",
                 str(fixtures_dir)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == EXIT_SETUP
    assert captured.err.splitlines() == [
        f"deltaspec conformance: this needs deltalake, which is not installed: "
        f"{install_hint('deltars')}"
    ]
    assert "ModuleNotFoundError" not in captured.out


def test_help_states_the_table(capsys):
    with pytest.raises(SystemExit):
        main(["conformance", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert EXIT_CODES in text
    for code in range(5):
        assert f"{code} " in EXIT_CODES
