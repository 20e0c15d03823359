"""Print, one per line, the `uv pip install` options that say what this machine's pip configuration says.

uv reads no pip configuration, so a machine whose pip is pointed at a mirror, a folder of wheels or a global
constraint file (`pip config list`: files and PIP_* variables) would install from PyPI alone under uv, or not at all.
scripts/setup.sh passes these options to uv, so either installer reads the same indexes. Each setting is taken from
where pip takes it: a PIP_* variable over the `install` section over the `global` one.
Run with the venv's python: `python scripts/pip_index_args.py [--index-url URL]` (an index that replaces pip's, as
TORCH_INDEX does for torch).
"""

import argparse
import ast
import subprocess
import sys

# pip's option -> uv's; pip lists several URLs or paths in one value, separated by white space or new lines
OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
           "constraint": "--constraint"}
PRECEDENCE = {":env:": 0, "install": 1, "global": 2}
"""Where pip reads a setting from, first first: the lower wins."""


def pip_settings() -> dict[str, list[str]]:
    """The settings of `pip config list` (``global.find-links='/opt/wheels'``, the value as Python writes it) that
    pip's install command reads, each from the place pip takes it from, by its bare name."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            check=True).stdout
    found: dict[str, tuple[int, list[str]]] = {}
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        section, _, name = key.rpartition(".")
        rank = PRECEDENCE.get(section)
        if rank is not None and value and (name not in found or rank < found[name][0]):
            found[name] = (rank, str(ast.literal_eval(value)).split())
    return {name: values for name, (_, values) in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-url", help="an index that replaces the one pip is set up with")
    args = parser.parse_args()
    settings = pip_settings()
    if args.index_url:
        settings["index-url"] = [args.index_url]
    for name, option in OPTIONS.items():
        for value in dict.fromkeys(settings.get(name, [])):
            print(option)
            print(value)


if __name__ == "__main__":
    main()
