"""``chemassay assay`` as a new user meets it: a model that cannot load is one line and exit 2
(never five skips and exit 0, never a traceback), an encoder needs no ``name``, the Python
entry point takes model objects as every ``evaluate`` does, ``--out`` must be a folder,
``--help`` lists every command in whole sentences, and the README starts with an install and
one assay, its examples writing only where a clone ignores."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chemassay.contract.errors import UserInputError

ROOT = Path(__file__).resolve().parents[1]

ENCODER = '''\
import numpy as np
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator


class Encoder:                     # an encoder as docs/adding-a-model.md shows one: no name
    def encode(self, smiles, layers="last"):
        generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=64)
        rows = []
        for text in smiles:
            molecule = Chem.MolFromSmiles(text)
            rows.append(generator.GetFingerprintAsNumPy(molecule) if molecule is not None else np.zeros(64))
        matrix = np.array(rows, dtype=np.float32)
        return [matrix] if layers == "all" else matrix


class Broken:                      # its constructor fails, as a missing checkpoint would
    def __init__(self):
        raise RuntimeError("checkpoint /nowhere/weights.pt not found")

    def encode(self, smiles, layers="last"):
        return None


class Nothing:                     # no protocol method at all
    def guess(self, smiles):
        return smiles
'''


@pytest.fixture
def user_models(tmp_path):
    path = tmp_path / "user_encoders.py"
    path.write_text(ENCODER)
    return path


def test_a_misspelt_module_or_class_is_the_load_error_and_exit_2(cli, tmp_path):
    out = tmp_path / "assay"
    outcome = cli("assay", "--model", "python:my_modle_that_is_not_there:Thing", "--quick", "--out", str(out))
    assert outcome.code == 2, outcome.stdout + outcome.stderr
    assert "cannot import 'my_modle_that_is_not_there'" in outcome.stderr
    assert "implements none" not in outcome.stdout + outcome.stderr and "skipped" not in outcome.stdout
    assert not out.exists()  # nothing written: no empty scorecard
    outcome = cli("assay", "--model", "python:support.toy_suite:Thing", "--quick", "--out", str(out))
    assert outcome.code == 2 and "'support.toy_suite' has no attribute 'Thing'" in outcome.stderr
    # the same line as every other command that loads the model
    other = cli("generation", "evaluate", "--model", "python:my_modle_that_is_not_there:Thing")
    assert other.code == 2 and "cannot import 'my_modle_that_is_not_there'" in other.stderr


def test_an_encoder_without_a_name_is_an_encoder(cli, user_models):
    from chemassay.models import check_model, load_model
    from chemassay.models.protocols import conforms
    from chemassay.models.python_kind import import_target

    spec = f"python:{user_models}:Encoder"
    encoder = load_model(spec, "encoder")
    assert encoder.encode(["CCO", "c1ccccc1"]).shape == (2, 64)
    assert encoder.name == f"python:{user_models}:Encoder"  # the default name: its spec
    assert conforms(import_target(f"{user_models}:Encoder")(), "encoder")
    assert check_model(spec, "encoder").passed
    plan = cli("assay", "--dry-run", "--quick", "--model", spec, "--suites", "robustness,generation")
    assert plan.code == 0, plan.stderr
    assert re.search(r"^run   robustness", plan.stdout, re.M)
    assert f"skip  generation asks for generator; {spec} implements encoder" in plan.stdout


def test_a_model_that_cannot_load_names_what_is_missing_in_one_line(cli, user_models, tmp_path):
    from chemassay.models import load_model

    broken = cli("assay", "--model", f"python:{user_models}:Broken", "--quick", "--out", str(tmp_path / "a"))
    assert broken.code == 2
    assert broken.stderr.strip() == (f"error: --model python:{user_models}:Broken: calling Broken() failed "
                                     "(RuntimeError: checkpoint /nowhere/weights.pt not found)")
    nothing = cli("assay", "--model", f"python:{user_models}:Nothing", "--quick", "--out", str(tmp_path / "b"))
    assert nothing.code == 2 and "Traceback" not in nothing.stderr
    assert "Nothing() returned an object (Nothing) that has none of the model methods" in nothing.stderr
    assert "encode()" in nothing.stderr and "sample()" in nothing.stderr
    with pytest.raises(UserInputError, match=r"Encoder\(\) has no sample\(\) method, which a generator needs "
                                             r".*; it has encode\(\) \(encoder\)"):
        load_model(f"python:{user_models}:Encoder", "generator")
    # a module that fails on import, and a plain function given options: one line each
    failing = tmp_path / "failing_import.py"
    failing.write_text("raise ValueError('no GPU here')\n")
    outcome = cli("assay", "--model", f"python:{failing}:Model", "--out", str(tmp_path / "c"))
    assert outcome.code == 2 and "importing" in outcome.stderr and "ValueError: no GPU here" in outcome.stderr
    assert "Traceback" not in outcome.stderr


def test_the_assay_takes_model_objects_and_functions(toy_suite, tmp_path):
    import chemassay
    from chemassay.models import python_kind
    from support.toy_suite import CountingModel

    report = chemassay.assay(CountingModel(), suites=["formula", "generation"], out=tmp_path / "object",
                             scorecard=False)
    spec = "python:support.toy_suite:CountingModel"
    outcomes = {outcome.suite: outcome for outcome in report.suites}
    assert [t.status for t in outcomes["formula"].tasks] == ["done"] and report.model == spec
    assert outcomes["generation"].skipped == f"generation asks for generator; {spec} implements formula-predictor"
    (result,) = report.results
    assert result.model.spec == spec and result.model.name == "counting" and result.metrics["exact"] == 1.0

    def carbon_only(smiles):
        return ["C" + str(s.count("C")) for s in smiles]

    by_suite = chemassay.assay({"formula": carbon_only}, suites=["formula"], out=tmp_path / "function",
                               scorecard=False)
    (result,) = by_suite.results
    assert result.model.spec.endswith("carbon_only") and result.metrics["exact"] == 0.0
    assert python_kind._OBJECTS == {}  # released when the assay ends
    # an object that is no model is the same one line as its spec
    with pytest.raises(UserInputError, match=r"object \(an object of class object\) is not a model \(an object with one of the "
                                              r"methods .*encode\(\).*\), a class or factory, or a function"):
        chemassay.assay(object(), suites=["formula"], out=tmp_path / "none")


def test_out_naming_a_file_says_it_must_be_a_folder(cli, tmp_path):
    existing = tmp_path / "results.json"
    existing.write_text("{}")
    outcome = cli("assay", "--out", str(existing), "--quick", "--suites", "stoichiometry")
    assert outcome.code == 2
    assert f"--out {existing}: is a file; the assay's output must be a folder" in outcome.stderr
    assert existing.read_text() == "{}"


def _help_rows(text: str) -> list[str]:
    """The rows of the Commands panel of a rich ``--help``: a row whose name column is empty
    continues the row above."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("╭") and "Commands" in line:
            inside = True
        elif line.startswith("╰"):
            inside = False
        elif inside:
            rows.append(line.strip("│ ").rstrip())
    return rows


def test_every_command_is_listed_in_whole_sentences(cli, monkeypatch):
    import typer.main

    from chemassay.cli.root import app

    monkeypatch.setenv("COLUMNS", "400")  # no wrapping by the terminal: only the help text's own breaks

    def groups(command, path):
        if hasattr(command, "commands"):
            yield path, command
            for name, sub in command.commands.items():
                yield from groups(sub, [*path, name])

    checked = 0
    for path, group in groups(typer.main.get_command(app), []):
        outcome = cli(*path, "--help")
        assert outcome.code == 0
        rows = _help_rows(outcome.stdout)
        for name, command in group.commands.items():
            if getattr(command, "hidden", False):
                continue
            summary = " ".join((command.short_help or command.help or "").split("\n\n")[0].split())
            row = next((r for r in rows if r.split(" ", 1)[0] == name), None)
            assert row is not None, (path, name)
            assert row.split(" ", 1)[1].strip() == summary, f"chemassay {' '.join(path)} --help breaks {name}"
            checked += 1
    assert checked > 40


def test_the_readme_starts_with_an_install_and_one_assay():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)
    intro, first = sections[0], sections[1]
    assert len([line for line in intro.splitlines()[1:] if line.strip()]) <= 3  # what it is, in 2-3 lines
    assert first.startswith("Install") and re.search(r"^(make install|pip install)", first, re.M)
    assert re.search(r"^chemassay assay ", first, re.M)
    assert "```text" in first  # and what the assay prints
    setup = next(section for section in sections if section.startswith("Set-up"))
    assert "make test" in setup and "make demo" in setup  # .ci/run calls the README's test command


def test_the_readme_examples_write_only_where_a_clone_ignores():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    outs = re.findall(r"""\bout=["']([^"']+)["']""", text)
    outs += re.findall(r"chemassay (?:assay|demo)\b[^\n]*?--out (\S+)", text)
    assert outs and "reports/assay" in outs
    for out in outs:
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", f"{out.rstrip('/')}/x"], cwd=ROOT)
        assert ignored.returncode == 0, f"README writes {out}, which a clone does not ignore"


def test_the_cli_assay_help_and_errors_through_the_console_script(tmp_path):
    """The same through a real process, as a new user types it (``python -m chemassay``)."""
    env_path = str(ROOT / "src")
    run = subprocess.run([sys.executable, "-m", "chemassay", "assay", "--model", "python:my_model:Thing", "--quick",
                          "--out", str(tmp_path / "assay")], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": env_path})
    assert run.returncode == 2
    assert run.stderr.strip() == ("error: --model python:my_model:Thing: cannot import 'my_model' "
                                  "(No module named 'my_model')")
    assert run.stdout == ""
