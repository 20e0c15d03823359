"""scripts/setup.sh installs with uv, which reads no pip configuration: scripts/pip_index_args.py hands uv what
this machine's pip is set up with, so a mirror or a folder of wheels configured for pip is used by uv too."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _uv_options(tmp_path: Path, config: str, **env: str) -> list[str]:
    (tmp_path / "pip.conf").write_text(config)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    environment.update(PIP_CONFIG_FILE=str(tmp_path / "pip.conf"), **env)
    run = subprocess.run([sys.executable, ROOT / "scripts" / "pip_index_args.py"], capture_output=True, text=True,
                         env=environment, check=True)
    lines = run.stdout.splitlines()
    return [f"{option} {value}" for option, value in zip(lines[::2], lines[1::2], strict=True)]


def test_pips_index_wheel_folders_and_constraints_become_uvs_options(tmp_path):
    options = _uv_options(tmp_path, "[global]\nindex-url = http://127.0.0.1:3141/simple\n"
                          "extra-index-url = file:///srv/a/simple file:///srv/b/simple\n"
                          "constraint = /srv/pins.txt\n[install]\nfind-links = /srv/wheels\n",
                          PIP_FIND_LINKS="/srv/more-wheels")
    for expected in ["--index-url http://127.0.0.1:3141/simple", "--extra-index-url file:///srv/a/simple",
                     "--extra-index-url file:///srv/b/simple", "--constraint /srv/pins.txt",
                     "--find-links /srv/wheels", "--find-links /srv/more-wheels"]:
        assert expected in options
    assert len(options) == len(set(options)), "a value set in two places is passed once"


def test_settings_uv_has_no_option_for_are_left_out(tmp_path):
    options = _uv_options(tmp_path, "[global]\ntimeout = 60\ntrusted-host = 127.0.0.1\n")
    assert not any("60" in o or "trusted" in o for o in options)
