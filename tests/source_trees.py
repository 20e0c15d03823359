"""The package's modules parsed in a child interpreter, once per test process.

Why: CPython 3.11 keeps the AST constructor's recursion counter in state shared by threads, so an ``ast.parse`` in a
test can fail with "AST constructor recursion depth mismatch" while another thread of the same process (a runtime's
event-loop thread left by an earlier test) is parsing too. The child has no other threads; the trees come back
pickled.
"""

import ast
import functools
import pickle
import subprocess
import sys
from pathlib import Path

_PARSE = ("import ast, pickle, sys\n"
          "paths = sys.argv[1:]\n"
          "sys.stdout.buffer.write(pickle.dumps([ast.parse(open(p, encoding='utf-8').read()) for p in paths]))\n")


@functools.cache
def parsed(root: Path) -> dict[Path, ast.Module]:
    """Every ``*.py`` under ``root`` (sorted) and its syntax tree."""
    paths = sorted(root.rglob("*.py"))
    out = subprocess.run([sys.executable, "-c", _PARSE, *map(str, paths)], capture_output=True, check=True).stdout
    return dict(zip(paths, pickle.loads(out), strict=True))
