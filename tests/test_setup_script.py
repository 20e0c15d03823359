"""scripts/setup.sh installs with uv, which reads no pip configuration: scripts/pip_index_args.py hands uv what
this machine's pip is set up with, so a mirror or a folder of wheels configured for pip is used by uv too."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _uv_options(tmp_path: Path, config: str, args: tuple[str, ...] | list[str] = (), **env: str) -> list[str]:
    """The options for ``config`` (read after the machine's own pip files, as ``PIP_CONFIG_FILE``) and ``env``,
    without the PIP_* variables of the machine; only those naming the test's own values (under /srv, on 127.0.0.1)."""
    (tmp_path / "pip.conf").write_text(config)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    environment.update(PIP_CONFIG_FILE=str(tmp_path / "pip.conf"), **env)
    run = subprocess.run([sys.executable, ROOT / "scripts" / "pip_index_args.py", *args], capture_output=True,
                         text=True, env=environment, check=True)
    lines = run.stdout.splitlines()
    return [f"{option} {value}" for option, value in zip(lines[::2], lines[1::2], strict=True)
            if value.startswith(("/srv", "file:///srv", "simple/", "http://127.0.0.1"))]


def test_pips_index_wheel_folders_and_constraints_become_uvs_options(tmp_path):
    options = _uv_options(tmp_path, "[global]\nindex-url = http://127.0.0.1:3141/simple\n"
                          "extra-index-url =\n    file:///srv/a/simple\n    file:///srv/b simple/\n"
                          "constraint = /srv/pins.txt\nfind-links = /srv/o'brien\n")
    assert options == ["--index-url http://127.0.0.1:3141/simple", "--extra-index-url file:///srv/a/simple",
                       "--extra-index-url file:///srv/b", "--extra-index-url simple/", "--find-links /srv/o'brien",
                       "--constraint /srv/pins.txt"]  # a value over several lines, split on white space as pip does


def test_each_setting_comes_from_where_pip_takes_it(tmp_path):
    options = _uv_options(tmp_path, "[global]\nfind-links = /srv/global\nindex-url = http://127.0.0.1:3141/a\n"
                          "[install]\nfind-links = /srv/install\n", PIP_INDEX_URL="http://127.0.0.1:3141/b")
    assert options == ["--index-url http://127.0.0.1:3141/b", "--find-links /srv/install"]
    replaced = _uv_options(tmp_path, "[global]\nindex-url = http://127.0.0.1:3141/a\n", args=["--index-url",
                                                                                               "http://127.0.0.1:1/t"])
    assert replaced == ["--index-url http://127.0.0.1:1/t"]  # TORCH_INDEX's: one index, not two


def test_settings_uv_has_no_option_for_are_left_out(tmp_path):
    (tmp_path / "pip.conf").write_text("[global]\ntimeout = 60\ntrusted-host = 127.0.0.1\n")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    run = subprocess.run([sys.executable, ROOT / "scripts" / "pip_index_args.py"], capture_output=True, text=True,
                         env={**environment, "PIP_CONFIG_FILE": str(tmp_path / "pip.conf")}, check=True)
    assert not {"60", "127.0.0.1", "--timeout", "--trusted-host"} & set(run.stdout.split())
