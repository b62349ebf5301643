"""Output folders: checked before any work."""

from __future__ import annotations


def test_a_dangling_link_as_output_folder_is_one_clear_error(tmp_path):
    import pytest

    from chemassay.errors import UserInputError
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
