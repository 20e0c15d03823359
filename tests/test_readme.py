"""The README stays a page a newcomer reads in five minutes, and it stays joined to the rest: its links lead to
files that exist and its two commands are the scripts CI runs. Links between the pages under docs/, the site's
nav and the API reference are checked by ``mkdocs build --strict`` (scripts/docs.sh, part of the test command)."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()
LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")  # [text](target) and ![alt](target)


def _relative_targets() -> list[str]:
    targets = LINK_TARGET.findall(README)
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def test_every_relative_link_in_the_readme_leads_to_a_file():
    targets = _relative_targets()
    assert targets, "the README links into docs/"
    assert [t for t in targets if not (ROOT / t.split("#")[0]).exists()] == []


def test_the_readme_is_short_and_the_rest_lives_in_docs():
    assert len(README.splitlines()) <= 250, "move the detail into a page under docs/ and link it"
    assert any(t.startswith("docs/") for t in _relative_targets())


def test_the_two_commands_are_the_scripts_ci_runs():
    block = re.search(r"## The two commands\n\n```bash\n(.*?)```", README, re.S)
    assert block, "the README shows the two commands in one bash block"
    commands = [line.split("#")[0].strip() for line in block[1].splitlines()]
    assert commands == ["./scripts/demo.sh", "./scripts/test.sh"]
    assert all(os.access(ROOT / command, os.X_OK) for command in commands)
    assert "./scripts/test.sh" in (ROOT / ".ci/run").read_text()
