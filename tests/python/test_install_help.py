"""The message an import without unixODBC raises (python/ferrodbc/_install_help.py). The real
thing, a system without libodbc.so.2, is run in the Debian chroots (eng/chroot.sh)."""

from __future__ import annotations

from ferrodbc import _install_help as h

LOADER = ImportError("libodbc.so.2: cannot open shared object file: No such file or directory")


def test_only_the_loaders_libodbc_error_is_explained():
    assert h.is_missing_driver_manager(LOADER)
    assert h.is_missing_driver_manager(ImportError("dlopen(...): Library not loaded: /opt/homebrew/opt/unixodbc/lib/libodbc.2.dylib"))
    assert not h.is_missing_driver_manager(ImportError("No module named 'ferrodbc._native'"))


def test_this_systems_command_comes_first(tmp_path):
    release = tmp_path / "os-release"
    release.write_text('NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\n')
    text = h.advice(LOADER, system="Linux", ids=h._os_release_ids(str(release)))
    commands = [line.split("(")[0].strip() for line in text.splitlines() if line.startswith("  ")]
    assert commands[0] == "sudo dnf install unixODBC"
    assert "sudo apt-get install unixodbc" in commands
    assert "libodbc.so.2: cannot open shared object file" in text
    assert "msodbcsql18" in text and "tdsodbc" in text


def test_macos_names_homebrew():
    assert "brew install unixodbc" in h.advice(LOADER, system="Darwin")
