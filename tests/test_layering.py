"""Layering runs one way: core -> llm/embeddings/index -> stages -> methods -> runtime -> eval/cli/service.

Checked per module, late (function-level) imports included: a module imports only from its own layer or
below, and no chain of imports between modules comes back to where it started. What runs a family from the command
line or an evaluation sits with those front ends (``cli/families/``, ``eval/families/``), so nothing under
``methods/`` imports upward.
"""

import ast
from pathlib import Path

import networkx as nx

import tanglerag
from tanglerag.family import families
from tests.source_trees import parsed

ROOT = Path(tanglerag.__file__).parent
LAYERS = {
    0: {"types", "trace", "config", "errors", "text", "tracking", "fileio", "jsonio", "tables", "provenance",
        "registry", "family", "settings", "users", "conflicts", "where", "disk_store", "redaction", "aio",
        "store_config", "trust", "dating"},
    1: {"llm", "embeddings", "onnx_embedder", "st_embedder", "embedding_cache", "index", "ingest", "dpr", "loaders",
        "datasets", "stores"},
    2: {"stages", "metrics"},
    3: {"methods"},
    4: {"pipeline", "outputs", "runtime", "corpus", "otel"},
    5: {"eval", "cli", "service", "testing", "api", "catalog", "__init__"},  # __init__ loads the API on first use
}
LAYER = {unit: layer for layer, units in LAYERS.items() for unit in units}
MODULES = {".".join(("tanglerag", *p.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__"): p
           for p in ROOT.rglob("*.py")}


ABOVE_METHODS = {"cli", "service", "eval", "runtime", "pipeline", "outputs", "api"}
"""What drives methods (the front ends and the runtime they assemble): methods/ never imports it."""
FRONT_END_FAMILIES = {"cli", "eval"}
"""``tanglerag.<cli|eval>.families.<name>`` drives family ``<name>`` from that front end: it may import its folder."""


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _family_folder(module: str) -> str | None:
    """The family a module belongs to, as its folder (``tanglerag.methods.corg``; a front end's module for it
    counts as the family's), or None for a general module."""
    parts = module.split(".")
    if parts[1:2] == ["methods"] and len(parts) >= 4:
        return ".".join(parts[:3])
    if len(parts) == 4 and parts[1] in FRONT_END_FAMILIES and parts[2] == "families":
        return f"tanglerag.methods.{parts[3]}"
    return None


def _imports(path: Path) -> set[str]:
    """The tanglerag modules a file imports, anywhere in it (``from pkg import module`` names the module)."""
    found = set()
    for node in ast.walk(parsed(ROOT)[path]):
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


def test_no_method_module_imports_the_front_ends_or_the_runtime():
    # the code that runs a family from the CLI or eval lives there (cli/families, eval/families), not in methods/
    upward = [(source, target) for source, target in GRAPH.edges
              if _unit(source) == "methods" and _unit(target) in ABOVE_METHODS]
    assert upward == []


def test_a_family_declares_its_commands_and_tasks_in_the_front_ends():
    references = [ref.partition(":")[0] for f in families() for ref in (*f.commands, *f.tasks.values())]
    own = [module for module in references if module.startswith("tanglerag.")]  # a plug-in's live elsewhere
    assert own and {_unit(module) for module in own} <= FRONT_END_FAMILIES and set(own) <= set(MODULES)


def test_no_general_module_imports_a_family_folder():
    # the general layers reach families only through their registration (tanglerag.family)
    into_families = [(source, target) for source, target in GRAPH.edges
                     if _family_folder(target) is not None and _family_folder(source) is None]
    assert into_families == []


def test_families_do_not_import_each_other_except_through_the_contract():
    across = [(source, target) for source, target in GRAPH.edges
              if None is not _family_folder(source) != _family_folder(target) is not None]
    assert across == []


def test_the_evaluation_imports_no_front_end():
    # the CLI, the service and the API drive the evaluation; it prints and writes on its own (its PCAS task once
    # borrowed the CLI's console: the last arrow running up)
    assert [(s, t) for s, t in GRAPH.edges if _unit(s) == "eval" and _unit(t) in {"cli", "service", "api"}] == []


def test_no_import_cycle_between_modules():
    assert list(nx.simple_cycles(GRAPH)) == []


def test_the_checker_sees_late_imports():
    # serve imports the service inside its function (uvicorn and FastAPI load only when serving)
    assert ("tanglerag.cli.serve", "tanglerag.service.app") in GRAPH.edges
