"""Write an ADBC driver manifest (``ferrodbc.toml``) so loaders find the driver by name:
``adbc_driver_manager.dbapi.connect(driver="ferrodbc", ...)``, DuckDB's ADBC extensions, R's
``adbcdrivermanager``.

    python -m adbc_driver_ferrodbc.manifest            # into this venv's etc/adbc/drivers
    python -m adbc_driver_ferrodbc.manifest --user     # ~/.config/adbc/drivers
    python -m adbc_driver_ferrodbc.manifest --dir DIR  # anywhere ($ADBC_DRIVER_PATH)

The manifest names the library by absolute path (driver managers do not resolve it relative to
the manifest), so it is written where the library is installed, not shipped.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

import adbc_driver_ferrodbc


def manifest_text(library: str) -> str:
    # TOML basic strings: backslashes and quotes escaped.
    path = library.replace("\\", "\\\\").replace('"', '\\"')
    return (
        "manifest_version = 1\n"
        'name = "ferrodbc"\n'
        f'version = "{adbc_driver_ferrodbc.__version__}"\n'
        "\n[ADBC]\n"
        'version = "1.1.0"\n'
        "\n[Driver]\n"
        f'shared = "{path}"\n'
        f'entrypoint = "{adbc_driver_ferrodbc._ENTRYPOINT}"\n'
    )


def default_dir(user: bool) -> pathlib.Path:
    if user:
        base = os.environ.get("XDG_CONFIG_HOME") or str(pathlib.Path.home() / ".config")
        return pathlib.Path(base) / "adbc" / "drivers"
    return pathlib.Path(sys.prefix) / "etc" / "adbc" / "drivers"


def write(directory: pathlib.Path) -> pathlib.Path:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "ferrodbc.toml"
    target.write_text(manifest_text(adbc_driver_ferrodbc._driver_path()))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--dir", type=pathlib.Path, help="write ferrodbc.toml into DIR")
    where.add_argument("--user", action="store_true", help="~/.config/adbc/drivers")
    args = parser.parse_args(argv)
    target = write(args.dir if args.dir else default_dir(args.user))
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
