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
