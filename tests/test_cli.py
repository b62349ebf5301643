from chemassay import __version__


def test_version(cli):
    out = cli("--version")
    assert out.code == 0 and __version__ in out.stdout


def test_doctor_lists_versions_and_datasets(cli):
    out = cli("doctor")
    assert out.code == 0
    for word in ("rdkit", "python", "omebench", "similarity backend"):
        assert word in out.stdout


def test_data_list_path_verify(cli):
    assert "schneider-50k" in cli("data", "list").stdout
    out = cli("data", "path", "omebench", "--file", "oMe_Gold.json")
    assert out.code == 0 and out.stdout.strip().endswith("oMe_Gold.json")
    out = cli("data", "verify", "uspto-15k")
    assert out.code == 0 and out.stdout.count(" ok ") == 3


def test_unknown_dataset_is_one_line_exit_2(cli):
    out = cli("data", "fetch", "nope")
    assert out.code == 2
    assert out.stderr.strip().startswith("error: unknown dataset 'nope'")
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_debug_shows_the_exception(cli):
    import pytest

    from chemassay.contract.errors import UserInputError

    with pytest.raises(UserInputError):
        cli("--debug", "data", "fetch", "nope")


def test_usage_error_exit_code(cli):
    out = cli("data", "path")
    assert out.code == 2


def test_flags_show_no_type_in_help(cli):
    outcome = cli("--help")
    assert outcome.code == 0 and "--quiet" in outcome.stdout and "<bool>" not in outcome.stdout
    assay = cli("assay", "--help")
    assert "<bool>" not in assay.stdout and "--dry-run" in assay.stdout and "SPEC" in assay.stdout


def test_the_library_warns_once_and_the_cli_prints_it_as_one_line(cli, tmp_path):
    """The library logs; the CLI prints each warning once as ``warning: ...`` on stderr, even
    with --quiet, and leaves logging as it found it."""
    import logging

    samples = tmp_path / "gen.txt"
    samples.write_text("CCO\nc1ccccc1O\nCC(=O)Nc1ccc(O)cc1\n")
    for quiet in ((), ("--quiet",)):
        outcome = cli(*quiet, "generation", "evaluate", samples, "--test", samples, "--scaffold-test", "none",
                      "--train", "none", "--no-plot", "--bootstrap", "0")
        assert outcome.code == 0, outcome.stderr
        lines = [line for line in outcome.stderr.splitlines() if "unique@1000:" in line]
        assert len(lines) == 1 and lines[0].startswith("warning: Can't compute unique@1000: only 3 valid")
    assert logging.getLogger("chemassay").propagate and not logging.getLogger("chemassay").handlers
