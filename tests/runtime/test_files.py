"""Output folders: checked before any work."""

from __future__ import annotations


def test_a_dangling_link_as_output_folder_is_one_clear_error(tmp_path):
    import pytest

    from chemassay.contract.errors import UserInputError
    from chemassay.runtime.files import ensure_writable_dir

    link = tmp_path / "model"
    link.symlink_to(tmp_path / "gone")
    with pytest.raises(UserInputError, match="a link to a folder that does not exist"):
        ensure_writable_dir(link, "model folder")
    assert ensure_writable_dir(tmp_path / "new" / "dir").is_dir()



def test_plain_file_mode_undoes_a_private_file(tmp_path):
    import os
    import stat

    from chemassay.runtime.files import plain_file_mode

    private = tmp_path / "weights.safetensors"
    private.write_bytes(b"x")
    private.chmod(0o600)
    plain_file_mode(private)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(private.stat().st_mode) == 0o666 & ~umask


def test_files_written_through_a_temporary_file_get_the_usual_mode(tmp_path):
    """A picture, a cleaned table and a downloaded file are as readable as a plain open() makes
    them (mkstemp's 0600 is not kept)."""
    import os

    import pandas as pd

    from chemassay.suites.reaction_ood.clean import write_table
    from chemassay.suites.stoichiometry.plots import plot_baselines

    umask = os.umask(0o022)
    try:
        scores = {("copy", split): {"EM": 0.5, "JAC": 0.6, "F1": 0.7, "mol_F1": 0.8}
                  for split in ("test_in", "test_cross", "test_out")}
        picture = plot_baselines(scores, tmp_path / "b.png", "t")
        table = tmp_path / "clean.csv"
        write_table([pd.DataFrame({"rxn_smiles": ["CC(=O)Cl.OCC>>CCOC(C)=O"]})], table)
    finally:
        os.umask(umask)
    for path in (picture, table):
        assert path.stat().st_mode & 0o777 == 0o644, path
