"""Layering runs one way: core -> llm/embeddings/index -> stages -> methods -> runtime -> eval/cli/service.

Checked per module, late (function-level) imports included: a module imports only from its own layer or
below, and no chain of imports between modules comes back to where it started.
"""

import ast
from pathlib import Path

import networkx as nx

import tanglerag

ROOT = Path(tanglerag.__file__).parent
LAYERS = {
    0: {"types", "trace", "config", "errors", "text", "tracking", "fileio", "jsonio", "tables"},
    1: {"llm", "embeddings", "index", "ingest", "datasets"},
    2: {"stages", "metrics"},
    3: {"methods", "settings"},
    4: {"pipeline", "runtime"},
    5: {"eval", "cli", "service", "testing", "api", "__init__"},  # __init__ loads the API on first use
}
LAYER = {unit: layer for layer, units in LAYERS.items() for unit in units}
MODULES = {".".join(("tanglerag", *p.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__"): p
           for p in ROOT.rglob("*.py")}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> set[str]:
    """The tanglerag modules a file imports, anywhere in it (``from pkg import module`` names the module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tanglerag"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tanglerag.")}
    return {name for name in found if name in MODULES}


GRAPH = nx.DiGraph((module, target) for module, path in MODULES.items() for target in _imports(path) if target != module)


def test_every_module_is_in_a_layer():
    assert {_unit(m) for m in MODULES} <= set(LAYER), "place new top-level modules in a layer"


def test_every_module_imports_only_its_layer_or_below():
    upward = [(source, target) for source, target in GRAPH.edges if LAYER[_unit(target)] > LAYER[_unit(source)]]
    assert upward == []


def test_no_import_cycle_between_modules():
    assert list(nx.simple_cycles(GRAPH)) == []


def test_the_checker_sees_late_imports():
    # serve imports the service inside its function (uvicorn and FastAPI load only when serving)
    assert ("tanglerag.cli.serve", "tanglerag.service.app") in GRAPH.edges
