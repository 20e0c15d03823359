"""The ``tanglerag`` command line: index, ask, eval, models, trace (+ contexts and pcas from cli_personal).

A ``TangleragError`` (something the user can fix) becomes one line on stderr and exit code 2;
any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape
from rich.progress import Progress
from rich.text import Text

from tanglerag.cli_cdit import cdit_app
from tanglerag.cli_cdit import register as register_cdit
from tanglerag.cli_personal import register
from tanglerag.cli_trace import trace_app
from tanglerag.config import Settings
from tanglerag.errors import ConfigError, IndexStoreError, InputError, TangleragError
from tanglerag.index.passage_index import PassageIndex, store_passages
from tanglerag.ingest import load_corpus
from tanglerag.pipeline import answer_output
from tanglerag.runtime import Runtime

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Answer questions from tangled retrieved contexts.")
console = Console(stderr=True)
log = logging.getLogger("tanglerag")

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="YAML config file")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", "-s", help="override, e.g. llm.temperature=0.2")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="log progress details")]

_USER_ERRORS = TangleragError


def _setup(config: Path | None, overrides: list[str] | None, verbose: bool) -> Settings:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(message)s",
                        handlers=[RichHandler(console=console, show_path=False)], force=True)
    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on its own logger
    return Settings.load(config, overrides)


def _comma_list(text: str) -> list[str]:
    """The non-empty names of a comma-separated option."""
    return [part.strip() for part in text.split(",") if part.strip()]


def _fail(exc: Exception) -> None:
    console.print(Text.assemble(("error: ", "bold red"), " ".join(str(exc).split())), soft_wrap=True)
    raise typer.Exit(code=2)


@app.command()
def index(
    corpus: Annotated[Path, typer.Argument(help="JSONL file ({id,title,text}) or folder of .txt/.md")],
    out: Annotated[Path, typer.Option("--out", "-o", help="index folder to create or extend")],
    index_type: Annotated[str | None, typer.Option("--index-type", help="flat | hnsw | ivf")] = None,
    bm25: Annotated[bool, typer.Option("--bm25", help="also build a BM25 index")] = False,
    add: Annotated[bool, typer.Option("--add", help="add to an existing index instead of replacing it")] = False,
    skip_bad: Annotated[bool, typer.Option("--skip-bad-lines", help="warn and skip malformed JSONL lines")] = False,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Build (or extend with --add) a persistent index of a corpus."""
    try:
        overrides = list(set_ or [])
        if index_type:
            overrides.append(f"index.index_type={index_type}")
        if bm25:
            overrides.append("index.bm25=true")
        settings = _setup(config, overrides, verbose)
        passages = load_corpus(corpus, chunk_size=settings.index.chunk_words,
                               chunk_overlap=settings.index.chunk_overlap, skip_bad=skip_bad)
        def keeps_settings(existing: PassageIndex) -> None:
            if index_type and index_type != existing.config.index_type or bm25 and existing.bm25 is None:
                raise InputError(f"{out} is a {existing.config.index_type} index"
                                 f"{' with BM25' if existing.bm25 else ''}; --add keeps its settings: "
                                 "drop --index-type/--bm25, or rebuild without --add")

        idx, added = store_passages(out, passages, Runtime(settings).embedder, settings.index, add=add,
                                    show_progress=True, check=keeps_settings)
        if add:
            console.print(f"added {added} new passages ({len(passages) - added} already present)")
        m = idx.manifest()
        console.print(f"index {out}: {m.count} passages, {m.index_type}{' + bm25' if m.bm25 else ''}, "
                      f"{m.embedding_model} ({m.dimension}-d)")
    except _USER_ERRORS as exc:
        _fail(exc)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="the question")],
    index_dir: Annotated[Path, typer.Option("--index", "-i", help="index folder from `tanglerag index`")],
    method: Annotated[str, typer.Option("--method", "-m")] = "concat",
    top_k: Annotated[int | None, typer.Option("--top-k", "-k")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON")] = False,
    with_trace: Annotated[bool, typer.Option("--trace", help="with --json: add every LLM call and method step")] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="bypass the LLM cache")] = False,
    user: Annotated[str | None, typer.Option("--user", "-u", help="use this user's contexts (PCAS)")] = None,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Retrieve passages and answer with citations; with --user, jointly pick the user's relevant context."""
    from pydantic import ValidationError

    from tanglerag.trace import DivaStep, PersonalContextStep
    from tanglerag.types import Question

    try:
        overrides = list(set_ or [])
        if top_k is not None:
            overrides.append(f"retrieval.top_k={top_k}")
        if no_cache:
            overrides.append("llm.cache=false")
        settings = _setup(config, overrides, verbose)
        try:
            q = Question(text=question, user_id=user)
        except ValidationError as exc:
            raise InputError(f"invalid question: {exc.errors()[0]['msg']}") from exc
        answer = Runtime(settings, index_dir=index_dir).pipeline(method, personal=user is not None).ask(q)
    except _USER_ERRORS as exc:
        _fail(exc)
        return
    if as_json:
        sys.stdout.write(json.dumps(answer_output(answer, user, trace=with_trace), ensure_ascii=False, indent=2) + "\n")
        return
    chosen = answer.trace.find(PersonalContextStep)
    out = Console()
    out.print(f"[bold]{escape(answer.text)}[/]")  # corpus and model text is printed literally, never as markup
    if chosen and chosen.text:
        out.print(f"[dim]using what we know about {escape(user)}: {escape(chosen.text)}[/]")
    diva = answer.trace.find(DivaStep)
    if diva and diva.grade:
        covered = sum(bool(v.covered) for v in diva.verification)
        out.print(f"retrieval: {diva.grade} — {covered} of {len(diva.interpretations)} interpretations covered"
                  f"{'; answered closed-book' if diva.mode == 'closed-book' else ''}", markup=False)
    for n, hit in enumerate(answer.passages, 1):
        mark = "*" if hit.passage.id in answer.citations else " "
        out.print(escape(f"{mark}[{n}] {hit.passage.id} ({hit.score:.3f}) {hit.passage.text[:100]}..."))
    u = answer.usage.summary()
    out.print(f"[dim]{u['llm_calls']} LLM calls ({u['cached_calls']} cached), {u['prompt_tokens']} prompt + "
              f"{u['completion_tokens']} completion tokens, {u['seconds']:.2f}s[/]")
    spent = [f"{name} {s.total_calls} call{'s' * (s.total_calls != 1)} ({s.prompt_tokens} prompt tokens)"
             for name, s in answer.usage.stages.items() if s.total_calls]
    if spent:
        out.print(f"[dim]calls by stage: {escape(', '.join(spent))}[/]")


@app.command("eval")
def eval_(
    dataset: Annotated[str, typer.Option("--dataset", "-d", help="registered name or file path")],
    methods: Annotated[str, typer.Option("--methods", help="comma-separated method names")] = "concat",
    metrics: Annotated[str | None, typer.Option("--metrics", help="comma-separated metric names "
                                                "(default: each method's own)")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n")] = None,
    sample: Annotated[int | None, typer.Option("--sample", help="a random sample of N questions (eval.seed)")] = None,
    head: Annotated[int | None, typer.Option("--head", min=1, help="answer only the first N of the loaded questions; "
                                             "the pool keeps all their passages (an interim look at a long run)")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="dataset format (detected if omitted)")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="folder for results and predictions")] = None,
    index_dir: Annotated[Path | None, typer.Option("--index", "-i", help="index for datasets without passages")] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", "-k")] = None,
    scope: Annotated[str | None, typer.Option("--scope", help="own | pooled passages per question")] = None,
    gold: Annotated[str | None, typer.Option("--gold", help="natural | ensure | exclude the gold passage")] = None,
    gold_position: Annotated[str | None, typer.Option("--gold-position", help="retrieval | top | bottom")] = None,
    closed_book_filter: Annotated[bool, typer.Option("--closed-book-filter",
                                                     help="drop questions answered right without passages")] = False,
    samples: Annotated[int | None, typer.Option("--samples", help="self-consistency samples per call")] = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="ORCA-ShARC: id2snippet.json")] = None,
    retriever: Annotated[str, typer.Option("--retriever", help="ORCA-ShARC: dense, bm25 or both")] = "dense,bm25",
    sweep: Annotated[bool, typer.Option("--sweep", help="ORCA-ShARC: tune lambda and beam on this set")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Benchmark methods on a dataset; cached LLM calls make re-runs free."""
    from tanglerag.datasets.registry import load_dataset
    from tanglerag.eval.report import markdown_table, write_outputs
    from tanglerag.eval.runner import EvalRunner
    from tanglerag.methods.registry import METHODS
    from tanglerag.metrics.registry import check_names
    from tanglerag.personal import orca_sharc

    try:
        overrides = list(set_ or [])
        flags = {"retrieval.top_k": top_k, "eval.passage_scope": scope, "eval.gold": gold,
                 "eval.gold_position": gold_position, "methods.samples": samples,
                 "eval.closed_book_filter": closed_book_filter or None}
        overrides += [f"{key}={value}" for key, value in flags.items() if value is not None]
        settings = _setup(config, overrides, verbose)
        if limit is not None and limit < 1:
            raise InputError(f"--limit must be at least 1, got {limit}")
        names = _comma_list(methods)
        if orca_sharc.looks_like(Path(dataset)):
            _eval_pcas(settings, Path(dataset), names, corpus, retriever, sweep, limit, out, as_json)
            return
        unknown = [m for m in names if m not in METHODS]
        if not names or unknown:
            raise InputError(f"unknown method(s) {unknown or names}; available: {', '.join(sorted(METHODS))}")
        metric_names = _comma_list(metrics or "")
        check_names(metric_names)
        dataset_name, loaded = load_dataset(dataset, fmt, limit, sample, settings.eval.seed)
        examples = loaded[:head] if head else loaded
        runner = EvalRunner(Runtime(settings, index_dir=index_dir), metrics=metric_names or None)
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("evaluating", total=len(examples) * len(names))
            report, predictions = runner.run(dataset_name, examples, names, on_step=lambda: progress.advance(task),
                                             pool=loaded)
    except _USER_ERRORS as exc:
        _fail(exc)
        return
    if out:
        write_outputs(out, report, predictions)
    if as_json:
        sys.stdout.write(json.dumps(report.to_output(), indent=2) + "\n")
    else:
        Console().print(markdown_table(report))


def _eval_pcas(settings: Settings, dataset: Path, names: list[str], corpus: Path | None, retriever: str,
               sweep: bool, limit: int | None, out: Path | None, as_json: bool) -> None:
    from tanglerag.cli_personal import run_pcas_eval
    from tanglerag.personal.pcas import METHOD_NAMES

    retrievers = _comma_list(retriever)
    bad = [m for m in names if m not in METHOD_NAMES] + [r for r in retrievers if r not in {"dense", "bm25"}]
    if bad:
        raise InputError(f"for ORCA-ShARC choose methods from {', '.join(METHOD_NAMES)} and retrievers from "
                         f"dense, bm25 (got {', '.join(bad)})")
    report = run_pcas_eval(settings, dataset, names, corpus, retrievers, sweep, limit, out)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    table = Console()
    for row in report["results"]:
        m = row["metrics"]
        ctx = "-" if m["context_recall@1"] is None else f"{100 * m['context_recall@1']:.2f}"
        table.print(f"{row['method']:<12} R@1 {100 * m['doc_recall@1']:.2f}  R@5 {100 * m['doc_recall@5']:.2f}  "
                    f"MAP@5 {100 * m['doc_map@5']:.2f}  context R@1 {ctx}  "
                    f"{1000 * row['usage']['seconds']:.2f} ms/query")


@app.command()
def models(
    prepare: Annotated[bool, typer.Option("--prepare", help="assemble and verify the embedded model")] = False,
    verify: Annotated[bool, typer.Option("--verify", help="re-hash the model file even if it was verified")] = False,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Show the configured models; --prepare / --verify the embedded one."""
    from tanglerag.llm.model_files import BUILTIN_MODELS, assemble_builtin, resolve_gguf

    try:
        settings = _setup(config, set_, verbose)
        out = Console()
        out.print(f"LLM backend: {settings.llm.backend}, model: {settings.llm.model}")
        if settings.llm.backend == "openai":
            out.print(f"  server: {settings.llm.base_url} (key from ${settings.llm.api_key_env})")
        out.print(f"embedding model: {settings.embedding.model}")
        out.print(f"cache dir: {settings.cache_dir}")
        if settings.llm.backend == "llamacpp" and (prepare or verify):
            spec = settings.llm.model
            if spec in BUILTIN_MODELS:
                path = assemble_builtin(BUILTIN_MODELS[spec], settings.cache_dir, force_verify=verify)
                out.print(f"embedded model ready and sha256-verified: {path}")
            else:
                out.print(f"embedded model file: {resolve_gguf(spec, settings.cache_dir)}")
    except _USER_ERRORS as exc:
        _fail(exc)


@app.command()
def serve(
    index_dir: Annotated[Path, typer.Option("--index", "-i", help="index folder to serve (created by the first upload)")],
    host: Annotated[str | None, typer.Option("--host", help="bind address (default service.host, 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option("--port", help="port (default service.port, 8000)")] = None,
    config: ConfigOpt = None, set_: SetOpt = None, verbose: VerboseOpt = False,
) -> None:
    """Serve the HTTP API and the web inspector; API keys from TANGLERAG_API_KEYS or service.api_keys_file."""
    try:
        overrides = list(set_ or [])
        if host is not None:
            overrides.append(f"service.host={host}")
        if port is not None:
            overrides.append(f"service.port={port}")
        settings = _setup(config, overrides, verbose)
        logging.getLogger("tanglerag").setLevel(logging.INFO)
        from tanglerag.service.auth import ApiKeys, is_loopback

        keys = ApiKeys.load(settings.service.api_keys_file)
        cfg = settings.service
        if not keys.enabled and not is_loopback(cfg.host):
            raise ConfigError(f"refusing to serve on {cfg.host} without API keys: set TANGLERAG_API_KEYS or "
                              "service.api_keys_file, or bind to 127.0.0.1")
        if index_dir.exists() and not (index_dir / "manifest.json").exists():
            raise IndexStoreError(f"{index_dir} exists and is not a tanglerag index")
        import uvicorn

        from tanglerag.service.app import create_app

        runtime = Runtime(settings, index_dir=index_dir)
        if not keys.enabled:
            console.print(f"no API keys configured: serving on {cfg.host} (loopback) only, every caller is admin")
        console.print(f"tanglerag inspector: http://{cfg.host}:{cfg.port}/")
        uvicorn.run(create_app(runtime, keys), host=cfg.host, port=cfg.port, log_level="warning")
    except _USER_ERRORS as exc:
        _fail(exc)


register(app, _setup, _fail, _USER_ERRORS)
register_cdit(_setup, _fail, _USER_ERRORS)
app.add_typer(trace_app, name="trace")
app.add_typer(cdit_app, name="cdit")

if __name__ == "__main__":
    app()
