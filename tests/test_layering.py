"""Layering runs one way: core -> llm/embeddings/index -> stages -> methods -> runtime -> eval/cli/service.

A module may import only from its own layer or below, and the stage-level packages (organize,
stages, metrics, personal) must not import each other in a cycle.
"""

import ast
from pathlib import Path

import networkx as nx

import tanglerag

ROOT = Path(tanglerag.__file__).parent
LAYERS = {
    0: {"types", "trace", "config", "errors", "text", "tracking", "fileio", "__init__"},
    1: {"llm", "embeddings", "index", "ingest", "datasets"},
    2: {"stages", "organize", "metrics", "personal"},
    3: {"methods"},
    4: {"pipeline", "runtime"},
    5: {"eval", "cli", "cli_personal", "cli_trace", "cli_cdit", "service", "testing"},
}
LAYER = {unit: layer for layer, units in LAYERS.items() for unit in units}


def _unit(path: Path) -> str:
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tanglerag."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("tanglerag.")}
    return found


def test_every_module_imports_only_its_layer_or_below():
    units = {_unit(p) for p in ROOT.rglob("*.py")}
    assert units <= set(LAYER), f"place new modules in a layer: {units - set(LAYER)}"
    upward = [(str(p.relative_to(ROOT)), target) for p in ROOT.rglob("*.py") for target in _imports(p)
              if LAYER[target] > LAYER[_unit(p)]]
    assert upward == []


def test_stage_level_packages_have_no_import_cycle():
    graph = nx.DiGraph()
    for path in ROOT.rglob("*.py"):
        source = _unit(path)
        graph.add_edges_from((source, t) for t in _imports(path) if t != source and LAYER.get(source) == LAYER[t] == 2)
    assert list(nx.simple_cycles(graph)) == []
