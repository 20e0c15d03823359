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
    0: {"types", "trace", "config", "errors", "text", "tracking", "fileio", "jsonio", "tables", "provenance",
        "registry", "family", "settings", "users", "conflicts", "where", "disk_store", "redaction"},
    1: {"llm", "embeddings", "embedding_cache", "index", "ingest", "dpr", "loaders", "datasets"},
    2: {"stages", "metrics"},
    3: {"methods"},
    4: {"pipeline", "runtime", "otel"},
    5: {"eval", "cli", "service", "testing", "api", "__init__"},  # __init__ loads the API on first use
}
LAYER = {unit: layer for layer, units in LAYERS.items() for unit in units}
MODULES = {".".join(("tanglerag", *p.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__"): p
           for p in ROOT.rglob("*.py")}


FRONT_ENDS = {"cli", "evaluation"}
"""A family's modules by these names are its commands and its evaluations: they sit with the CLI and eval layers."""


def _unit(module: str) -> str:
    parts = module.split(".")
    if parts[1:2] == ["methods"] and len(parts) == 4 and parts[3] in FRONT_ENDS:
        return parts[3] if parts[3] == "cli" else "eval"
    return parts[1] if len(parts) > 1 else "__init__"


def _family_folder(module: str) -> str | None:
    """The family folder a module lies in (``tanglerag.methods.corg``), or None for a general module."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[1:2] == ["methods"] and len(parts) >= 4 else None


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


def test_no_general_module_imports_a_family_folder():
    # the general layers reach families only through their registration (tanglerag.family)
    into_families = [(source, target) for source, target in GRAPH.edges
                     if _family_folder(target) is not None and _family_folder(source) is None]
    assert into_families == []


def test_families_do_not_import_each_other_except_through_the_contract():
    across = [(source, target) for source, target in GRAPH.edges
              if None is not _family_folder(source) != _family_folder(target) is not None]
    assert across == []


def test_no_import_cycle_between_modules():
    assert list(nx.simple_cycles(GRAPH)) == []


def test_the_checker_sees_late_imports():
    # serve imports the service inside its function (uvicorn and FastAPI load only when serving)
    assert ("tanglerag.cli.serve", "tanglerag.service.app") in GRAPH.edges
