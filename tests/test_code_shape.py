"""Small functions: none in the package needs scrolling (80 lines at most, docstring and signature included); the
stage list that settings are checked against names every stage a method marks."""

import ast
import re
from pathlib import Path

import tanglerag
from tanglerag.family import families, known_stages
from tanglerag.tracking import CORE_STAGES
from tests.source_trees import parsed

ROOT = Path(tanglerag.__file__).parent
LIMIT = 80


def test_no_function_over_the_limit():
    long = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path, tree in parsed(ROOT).items() for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > LIMIT]
    assert long == []


def _marked(folder: Path) -> set[str]:
    return {name for path in folder.rglob("*.py") for name in re.findall(r'\bstage\("(\w+)"\)', path.read_text())}


def test_the_stage_list_names_every_stage_the_package_marks():
    assert _marked(ROOT) == known_stages()


def test_each_family_declares_the_stages_its_folder_marks():
    undeclared = {family.name: _marked(ROOT / "methods" / family.name) - family.stages - CORE_STAGES
                  for family in families()}
    assert {name: stages for name, stages in undeclared.items() if stages} == {}


def test_no_two_classes_in_the_package_share_a_name():
    """A name says which class it is: two classes of one name (two ``Reading``s) send a reader to the wrong one."""
    where: dict[str, list[str]] = {}
    for path, tree in parsed(ROOT).items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert {name: places for name, places in where.items() if len(places) > 1} == {}
