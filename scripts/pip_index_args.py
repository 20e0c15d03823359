"""Print, one per line, the `uv pip install` options that say what this machine's pip configuration says.

uv reads no pip configuration, so a machine whose pip is pointed at a mirror, a folder of wheels, a global
constraint file (`pip config list`: files and PIP_* variables) would install from PyPI alone under
uv, or not at all. scripts/setup.sh passes these options to uv, so either installer sees the same packages.
Run with the venv's python: `python scripts/pip_index_args.py`.
"""

import shlex
import subprocess
import sys

# pip's option -> uv's; pip lists several URLs or paths in one value, separated by white space
OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
           "constraint": "--constraint"}


def pip_settings() -> dict[str, list[str]]:
    """Every setting `pip config list` reports (``global.find-links='/opt/wheels'``), by its bare name."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            check=True).stdout
    settings: dict[str, list[str]] = {}
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        section, _, name = key.rpartition(".")
        if section in {"global", "install", ":env:"}:
            settings.setdefault(name, []).extend(shlex.split(shlex.split(value)[0]) if value else [])
    return settings


def main() -> None:
    settings = pip_settings()
    for name, option in OPTIONS.items():
        for value in dict.fromkeys(settings.get(name, [])):
            print(option)
            print(value)


if __name__ == "__main__":
    main()
