"""Small functions: none in the package needs scrolling (80 lines at most, docstring and signature included)."""

import ast
from pathlib import Path

import tanglerag

ROOT = Path(tanglerag.__file__).parent
LIMIT = 80


def test_no_function_over_the_limit():
    long = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in ROOT.rglob("*.py") for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > LIMIT]
    assert long == []
