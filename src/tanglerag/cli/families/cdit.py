"""``tanglerag cdit status|trim|undo``: CDIT's index trimming (paper 003)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tanglerag.cli.common import ConfigOpt, JsonOpt, SetOpt, TerminalConsole, load_settings
from tanglerag.datasets.registry import load_dataset
from tanglerag.index.passage_index import PassageIndex, read_manifest
from tanglerag.index.trim import TrimLog
from tanglerag.methods.cdit.curate import curate
from tanglerag.methods.cdit.method import CditMethod
from tanglerag.runtime import Runtime
from tanglerag.stores.registry import require

cdit_app = typer.Typer(name="cdit", no_args_is_help=True, help="CDIT index trimming: witnesses, separated passages, undo.")
IndexOpt = Annotated[Path, typer.Option("--index", "-i", help="index folder")]


def _print(numbers: dict[str, Any], as_json: bool, separator: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(numbers) + "\n")
    else:
        TerminalConsole().print(separator.join(f"{key.replace('_', ' ')}: {value}" for key, value in numbers.items()))


@cdit_app.command("status")
def status(index_dir: IndexOpt, as_json: JsonOpt = False, config: ConfigOpt = None, set_: SetOpt = None) -> None:
    """Witnesses, separated pairs and cut HNSW links of an index."""
    settings = load_settings(config, set_)
    index = PassageIndex.load(index_dir, Runtime(settings).embedder)  # reads the trim log too
    state = index.trim
    _print({"separated_pairs": len(state.separated), "cut_links": index.cut_link_count,
            "pending_witnesses": state.pending, "witnesses": sum(state.witnesses.values()),
            "judged_queries": state.judged_queries, "last_seq": state.last_seq,
            "index_type": index.config.index_type}, as_json, "\n")


@cdit_app.command("trim")
def trim(index_dir: IndexOpt,
         dataset: Annotated[str, typer.Option("--dataset", "-d", help="questions: registered name or file")],
         witnesses: Annotated[int | None, typer.Option("--witnesses", min=1, help="cdit.witnesses")] = None,
         limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
         top_k: Annotated[int | None, typer.Option("--top-k", "-k", min=1)] = None,
         as_json: JsonOpt = False, config: ConfigOpt = None, set_: SetOpt = None) -> None:
    """Offline curation: judge each question's retrieval, record witnesses, separate (and cut) links."""
    settings = load_settings(config, set_, cdit__witnesses=witnesses, retrieval__top_k=top_k, cdit__record=True)
    require(settings, "separations", "cdit trim")
    read_manifest(index_dir)
    _, examples = load_dataset(dataset, None, limit, None, settings.eval.seed)
    resources = Runtime(settings, index_dir=index_dir).resources()
    assert resources.retriever is not None  # an index folder was given
    totals = curate(CditMethod(resources), resources.retriever, [example.question for example in examples])
    _print(totals.model_dump(), as_json, ", ")


@cdit_app.command("undo")
def undo(index_dir: IndexOpt,
         to: Annotated[int, typer.Option("--to", min=0, help="keep log entries up to this sequence number")] = 0) -> None:
    """Forget witnesses and separations after ``--to`` (default: all); the index is untouched on disk."""
    read_manifest(index_dir)
    dropped = TrimLog(index_dir).undo(to)
    TerminalConsole(stderr=True).print(f"dropped {dropped} trim log entries after #{to}")
