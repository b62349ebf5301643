"""Every example in README.md and docs/*.md is checked against the code it describes.

* ```python blocks run, each in a fresh namespace and an empty temporary working directory
  (``>>>`` blocks as doctests, their printed output compared). Blocks that call an
  OpenAI-compatible server at ``http://localhost:8000/v1`` run against a real local server
  (tests/support/openai_server.py) whose address replaces that one.
* ```bash and ```console blocks: every ``chemassay ...`` command line is resolved against the
  real command tree (``typer.main.get_command``), so a renamed command or option, or a
  positional argument too many, fails here.

Files an example reads that a shell block above it writes (``ca_formula_t1/``,
``split_doc/test_ood.parquet``, ``pred.jsonl``...) are made small with chemassay itself
(``FIXTURES``) and put in the example's directory; a block that is a file of its own (first
line ``# my_models.py``) is written for the examples that import it. A block that cannot run
here (it needs a trained model folder or hours of CPU) is marked in the page by an HTML
comment on the line right above it, ``<!-- doctest: skip (the reason) -->``; a long one by
``<!-- doctest: slow (the reason) -->`` (run with ``-m slow``: ``make test-slow``). Each mark must
give a reason. The examples that read the MOSES download (``make test`` fetches it) find it
through ``$CHEMASSAY_DATA``, and skip, saying so, where it was not fetched.
"""

from __future__ import annotations

import doctest
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!--\s*doctest:\s*(?P<kind>[\w-]+)\s*(?:\((?P<reason>.*)\))?\s*-->")
LOCAL_SERVER = "http://localhost:8000/v1"
SHELL_LANGUAGES = {"bash", "console", "sh", "shell"}


@dataclass(frozen=True)
class Block:
    """A fenced code block of a page, with the doctest mark written just above it."""

    page: str
    line: int
    lang: str
    body: str
    mark: str | None = None
    reason: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            mark = MARK.search(before)
            found.append(Block(page=page.relative_to(ROOT).as_posix(), line=text.count("\n", 0, match.start()) + 1,
                               lang=match["lang"], body=match["body"], mark=mark["kind"] if mark else None,
                               reason=(mark["reason"] or "").strip() or None if mark else None))
    return found


BLOCKS = _blocks()
PYTHON = [block for block in BLOCKS if block.lang == "python"]
# shell blocks, and untagged usage synopses (``chemassay mechanism evaluate PRED [--tau 0.6]``)
SHELL = [block for block in BLOCKS if block.lang in SHELL_LANGUAGES
         or (block.lang == "" and re.search(r"^chemassay ", block.body, re.M))]


def test_the_pages_hold_examples_and_every_mark_is_known_and_explained():
    assert len(PYTHON) >= 30 and len(SHELL) >= 25
    for block in BLOCKS:
        if block.mark is not None:
            assert block.mark in {"skip", "slow"}, f"{block.id}: unknown doctest mark {block.mark!r}"
            assert block.reason, f"{block.id}: a doctest mark needs a reason: <!-- doctest: {block.mark} (why) -->"
    skipped = [block.id for block in PYTHON if block.mark == "skip"]
    assert len(skipped) <= len(PYTHON) // 3, f"too many skipped examples: {skipped}"
    # a mark must sit on the line right above its block, else it would be silently ignored
    for page in PAGES:
        name = page.relative_to(ROOT).as_posix()
        written = len(MARK.findall(page.read_text(encoding="utf-8")))
        attached = sum(1 for block in BLOCKS if block.page == name and block.mark is not None)
        assert written == attached, f"{name}: a doctest mark is not on the line right above a code block"


# --- python blocks --------------------------------------------------------------------------
def _python_params() -> list:
    params = []
    for block in PYTHON:
        marks = []
        if block.mark == "skip":
            marks.append(pytest.mark.skip(reason=block.reason))
        elif block.mark == "slow":
            marks.append(pytest.mark.slow)
        params.append(pytest.param(block, id=block.id, marks=marks))
    return params


def _module_files() -> dict[str, str]:
    """Blocks that are a file of their own (first line ``# my_models.py``), by module name."""
    files = {}
    for block in PYTHON:
        first = block.body.splitlines()[0].strip() if block.body.strip() else ""
        match = re.fullmatch(r"#\s*(\w+)\.py", first)
        if match:
            files[match[1]] = block.body
    return files


MODULE_FILES = _module_files()


# Files the examples read that an earlier shell block of the page writes: small stand-ins made
# with chemassay itself, written into the example's working directory when its source names them.
def _truth_table(path: Path) -> None:
    import chemassay

    path.parent.mkdir(parents=True, exist_ok=True)
    chemassay.load_dataset("schneider-dataseta").iloc[500:540].to_parquet(path)


def _ranked_predictions(path: Path) -> None:
    """A wide predictions file for the truth table above: the recorded product first for every
    other reaction, so the score is neither 0 nor 1."""
    import pandas as pd

    import chemassay
    from chemassay.chem import canonical_smiles

    truth = chemassay.load_dataset("schneider-dataseta").iloc[500:540]
    products = [canonical_smiles(rxn.split(">")[-1]) for rxn in truth["rxn_smiles"]]
    first = [product if i % 2 == 0 else "CCO" for i, product in enumerate(products)]
    pd.DataFrame({"pred_1": first, "pred_2": ["CC(=O)O"] * len(first)}).to_csv(path, index=False)


def _chemalgebra_folder(path: Path) -> None:
    from chemassay import stoichiometry

    stoichiometry.build("uspto-15k", path, encoding="formula", task="t1", aug=1, seed=0, limit=300)


def _mechanism_predictions(path: Path) -> None:
    import chemassay.mechanism as mechanism

    mechanism.predict("gold-oracle", "gold", out=path)


def _generated_smiles(path: Path) -> None:
    """310 samples of a MOSES model (bundled with the tests), one SMILES per line."""
    import shutil

    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "tests" / "data" / "generation" / "moses_gen_310.txt", path)


def _reference_smiles(path: Path) -> None:
    """A small reference set of 300 MOSES test molecules."""
    import shutil

    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "tests" / "data" / "generation" / "moses_test_300.txt", path)


def _result_folder(path: Path) -> None:
    from chemassay.reaction_ood import evaluate

    path.mkdir(parents=True)
    evaluate([["CC(=O)NC", "CCO"], ["CCO"]], ["CNC(C)=O", "CCOC(C)=O"], k=2).write(path / "a.json")
    evaluate([["CCO"], ["CCOC(C)=O"]], ["CNC(C)=O", "CCOC(C)=O"], k=2).write(path / "b.json")


FIXTURES = {
    "ca_formula_t1": _chemalgebra_folder,
    "split_doc/test_ood.parquet": _truth_table,
    "splits/document/test_ood.parquet": _truth_table,
    "test_ood.parquet": _truth_table,
    "preds.csv": _ranked_predictions,
    "pred_ood.csv": _ranked_predictions,
    "pred.jsonl": _mechanism_predictions,
    "reports/demo": _result_folder,
    "gen.txt": _generated_smiles,
    "my_test.txt": _reference_smiles,
}


@pytest.fixture(scope="module")
def example_cache(tmp_path_factory):
    """One chemassay home for every example (datasets and caches are shared) and the
    stand-in files, each made once."""
    return tmp_path_factory.mktemp("examples")


def _place_fixtures(source: str, cache: Path, here: Path) -> None:
    import shutil

    for name, make in FIXTURES.items():
        if f'"{name}' not in source and f"{name}/" not in source and f":{name}" not in source:
            continue
        made = cache / "fixtures" / name
        if not made.exists():
            make(made)
        target = here / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if made.is_dir():
            shutil.copytree(made, target)
        else:
            shutil.copy(made, target)


@pytest.mark.parametrize("block", _python_params())
def test_python_example_runs(block: Block, example_cache, tmp_path, monkeypatch, request):
    import sys

    if "moses" in block.body.lower():
        # the MOSES download (make test fetches it), found where the user's chemassay home has it
        # and then through $CHEMASSAY_DATA, as a user's local copy would be
        from chemassay.data import locate

        found = locate("moses", "test_stats.npz")
        if found is None:
            pytest.skip("MOSES not fetched (chemassay data fetch moses; make test fetches it)")
        monkeypatch.setenv("CHEMASSAY_DATA", str(found.parent.parent))
    monkeypatch.setenv("CHEMASSAY_HOME", str(example_cache / "home"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    here = tmp_path / "work"
    here.mkdir()
    monkeypatch.chdir(here)
    source = block.body
    if LOCAL_SERVER in source:
        server = request.getfixturevalue("openai_server")
        source = source.replace(LOCAL_SERVER, server.base_url)
    for module, body in MODULE_FILES.items():
        if re.search(rf"\b{module}[:.]|import {module}\b", source):
            (here / f"{module}.py").write_text(body)
            monkeypatch.syspath_prepend(str(here))
            monkeypatch.delitem(sys.modules, module, raising=False)
    _place_fixtures(source, example_cache, here)
    if source.lstrip().startswith(">>>"):
        parser = doctest.DocTestParser()
        test = parser.get_doctest(source, {"__name__": "__doc_example__"}, block.id, block.page, block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        failures: list[str] = []
        runner.run(test, out=failures.append)
        assert runner.failures == 0, "".join(failures)
    else:
        exec(compile(source, block.id, "exec"), {"__name__": "__doc_example__"})  # noqa: S102 - the example is the test


# --- shell blocks ---------------------------------------------------------------------------
def _command_lines(block: Block) -> list[list[str]]:
    """The ``chemassay`` invocations of a shell block, as argument lists (without the
    program name); ``$(chemassay ...)`` inside another command counts too."""
    text = block.body.replace("\\\n", " ")
    if block.lang == "":
        text = text.replace("[", " ").replace("]", " ")  # a synopsis: optional parts are checked too
    commands = []
    for raw in text.splitlines():
        line = raw.strip()
        if block.lang == "console":
            if not line.startswith("$ "):
                continue  # program output
            line = line[2:]
        pieces = [match[1] for match in re.finditer(r"\$\((chemassay\b[^)]*)\)", line)]
        pieces.append(re.sub(r"\$\([^)]*\)", "VALUE", line))
        for piece in pieces:
            current: list[str] | None = None
            for token in shlex.split(piece, comments=True):
                if token in {"&&", "||", ";", "|"}:
                    current = None
                elif current is None:
                    if token == "chemassay":
                        current = []
                        commands.append(current)
                else:
                    current.append(token)
    return commands


def _root_command():
    import typer.main

    from chemassay.cli import app

    return typer.main.get_command(app)


def _options(command) -> dict[str, int]:
    """Every option name of a command (``--out``, ``-o``, ``--no-cache``...) and how many
    values it takes (0 for a flag)."""
    names = {}
    for param in command.params:
        if param.param_type_name != "option":
            continue
        takes = 0 if param.is_flag or getattr(param, "count", False) else max(param.nargs, 1)
        for name in (*param.opts, *param.secondary_opts):
            names[name] = takes
    names["--help"] = 0
    return names


def _is_option(token: str) -> bool:
    return token.startswith("-") and token != "-" and not re.fullmatch(r"-\d[\d.]*", token)


def _resolve(args: list[str]) -> str | None:
    """``None`` if ``chemassay ARGS`` names a real command with real options and no argument
    too many, else what is wrong. ``...`` stands for arguments left out; ``<name>`` for any
    subcommand (every one is then checked)."""

    def walk(command, path: list[str], tokens: list[str]) -> str | None:
        where = " ".join(path)
        options = _options(command)
        positional: list[str] = []
        elided = False
        index = 0
        while index < len(tokens):
            token = tokens[index]
            index += 1
            if token == "...":
                elided = True
            elif _is_option(token):
                name, _, inline = token.partition("=")
                if name not in options:
                    return f"{where}: no option {name}"
                if not inline:
                    index += options[name]  # its values
            elif hasattr(command, "commands"):
                # a group: the first word that is no option names the subcommand
                rest = tokens[index:] + (["..."] if elided else [])
                if re.fullmatch(r"<[\w-]+>", token):
                    problems = [walk(sub, [*path, name], rest) for name, sub in sorted(command.commands.items())]
                    return next((problem for problem in problems if problem), None)
                sub = command.commands.get(token)
                if sub is None:
                    return f"{where}: no command {token!r} (commands: {', '.join(sorted(command.commands))})"
                return walk(sub, [*path, token], rest)
            else:
                positional.append(token)
        arguments = [param for param in command.params if param.param_type_name == "argument"]
        if not elided and all(param.nargs >= 0 for param in arguments):
            room = sum(param.nargs for param in arguments)
            if len(positional) > room:
                return f"{where}: {len(positional)} arguments {positional} for {room}"
        return None

    return walk(_root_command(), ["chemassay"], list(args))


def _shell_params() -> list:
    params = []
    for block in SHELL:
        for index, args in enumerate(_command_lines(block)):
            params.append(pytest.param(args, id=f"{block.id}#{index}:{' '.join(args[:2])}"))
    return params


@pytest.mark.parametrize("args", _shell_params())
def test_shell_example_names_real_commands_and_options(args: list[str]):
    problem = _resolve(args)
    assert problem is None, f"chemassay {' '.join(args)}: {problem}"


def test_the_command_check_catches_renamed_commands_and_options():
    """The resolver is strict where the docs could drift: unknown command, unknown option,
    one positional argument too many; values, placeholders and ``...`` pass."""
    assert _resolve(["stoichiometry", "build", "uspto-15k", "--encoding", "formula", "--out", "x"]) is None
    assert "no command" in _resolve(["stoichiometry", "bild", "uspto-15k"])
    assert "no option --encodings" in _resolve(["stoichiometry", "build", "uspto-15k", "--encodings", "formula"])
    assert "arguments" in _resolve(["reaction-ood", "verify", "a", "b"])
    assert "no option --nostore" in _resolve(["--nostore", "data", "list"])
    assert _resolve(["--no-store", "data", "list"]) is None
    assert _resolve(["<suite>", "--help"]) is None
    assert _resolve(["models", "train", "seq2seq", "...", "--max-minutes", "9"]) is None
    assert "no option" in _resolve(["models", "train", "seq2seq", "...", "--max-minuets", "9"])
