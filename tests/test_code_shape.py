"""Small functions: none in the package needs scrolling (80 lines at most, docstring and signature included); the
stage list that settings are checked against names every stage a method marks."""

import ast
import re
from pathlib import Path

import tanglerag
from tanglerag.tracking import STAGES

ROOT = Path(tanglerag.__file__).parent
LIMIT = 80


def test_no_function_over_the_limit():
    long = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in ROOT.rglob("*.py") for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > LIMIT]
    assert long == []


def test_the_stage_list_names_every_stage_the_package_marks():
    marked = {name for path in ROOT.rglob("*.py") for name in re.findall(r'\bstage\("(\w+)"\)', path.read_text())}
    assert marked == STAGES
