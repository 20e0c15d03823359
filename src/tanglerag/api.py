"""The Python API: build and edit an index, ask questions (one, awaited, or many at once) and run evaluations.

A ``Tanglerag`` holds an index folder, its settings and the models, loaded on first use and then kept, so a
notebook or an application makes one and asks it many questions:

```python
import tanglerag

rag = tanglerag.Tanglerag("my-index", tanglerag.Settings.load(overrides=["retrieval.top_k=5"]))
rag.build("corpus.jsonl")
answer = rag.ask("Who directed Lahu Ke Do Rang?", method="corg")
print(answer.text, answer.citations)
```

The module-level functions (``tanglerag.ask``, ``tanglerag.build_index``, ...) do the same once each, loading
the models every call: handy for one question, slow for many. Each step is the one the CLI runs: ``build``,
``add``, ``replace`` and ``remove`` are ``tanglerag index`` (streamed, crash-safe, locked against concurrent
writers), ``ask`` is ``tanglerag ask`` (both through ``Runtime.aanswer``, the one front door the CLI and the
service use too), ``ask_many`` answers on the evaluation engine's event loop, and
``evaluate`` is ``tanglerag eval``. Errors a user can fix are ``tanglerag.errors.TangleragError``s, as the
CLI's one-line errors are; an argument of the wrong type is one too (``InputError`` naming the argument), checked
on the way in rather than met as an ``AttributeError`` deep below.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import UnionType

from pydantic import ValidationError

from tanglerag.config import MAX_TOP_K
from tanglerag.datasets.registry import dataset_task, load_dataset
from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import InputError
from tanglerag.eval.engines.local import answer_in_batches
from tanglerag.eval.records import EvalReport, QuestionResult
from tanglerag.eval.report import write_outputs
from tanglerag.eval.runner import EvalRunner
from tanglerag.index import passage_index
from tanglerag.index.corpus import Corpus, corpus_reader
from tanglerag.index.documents import DocumentChanges
from tanglerag.index.extend import add_streaming
from tanglerag.index.manifest import IndexManifest
from tanglerag.index.streaming import build_streaming
from tanglerag.llm.client import LLM
from tanglerag.methods.base import method_class
from tanglerag.metrics.registry import check_names
from tanglerag.runtime import DEFAULT_METHOD, AskRequest, Runtime, SearchRequest
from tanglerag.settings import Settings
from tanglerag.stages.followup import Turn, read_turns
from tanglerag.types import Answer, Question, RetrievedPassage
from tanglerag.where import authority_tiers

__all__ = ["Tanglerag", "aask", "add_documents", "ask", "ask_many", "build_index", "evaluate", "remove_documents",
           "replace_documents"]

PathArg = str | os.PathLike[str]
Progress = Callable[[int, int], None]
"""Told ``(questions done, questions in all)`` each time a question finishes, in the caller's thread."""
IndexProgress = Callable[[int], None]
"""Told how many passages each batch just indexed held."""
CORPUS_TYPES = (str, os.PathLike, Sequence)
CORPUS_TAKES = "a JSONL file, a folder or a list of tanglerag.Passage"


class Tanglerag:
    """An index folder with the settings and models that build it and answer from it.

    ``settings`` default to ``Settings.load()``; build others with ``Settings.load(path, overrides, values)``
    (a YAML file, ``["section.key=value"]`` as ``--set`` takes them, typed values). ``llm`` / ``embedder``
    replace the configured models (``tanglerag.testing.canned_llm`` and ``HashEmbedder`` in tests, or models a
    process already holds). ``index_dir`` may be left out for evaluations on datasets that carry their passages.
    """

    def __init__(self, index_dir: PathArg | None = None, settings: Settings | None = None, *, llm: LLM | None = None,
                 embedder: TextEmbedder | None = None) -> None:
        _expect("settings", settings, Settings | None, "a tanglerag.Settings (Settings.load(path, overrides, values))")
        _expect("index_dir", index_dir, str | os.PathLike | None, "a folder path")
        self.settings = settings if settings is not None else Settings.load()
        self.index_dir = Path(index_dir) if index_dir is not None else None
        self.runtime = Runtime(self.settings, index_dir=self.index_dir, llm=llm, embedder=embedder)
        """What answers: the LLM, embedder, index and methods, each built on first use."""

    def build(self, corpus: Corpus, *, skip_bad_lines: bool = False,
              progress: IndexProgress | None = None) -> IndexManifest:
        """Build the index anew from ``corpus`` (``tanglerag index CORPUS --out DIR``): the folder's old index, if
        any, is replaced once the new one is complete. ``settings.index`` picks the index type, BM25 and chunking;
        ``skip_bad_lines`` warns about malformed JSONL lines instead of refusing the corpus."""
        _expect_corpus(corpus)
        read = corpus_reader(corpus, self.settings.index, skip_bad=skip_bad_lines, tiers=authority_tiers(self.settings))
        index = build_streaming(self._folder(), read(), self.runtime.embedder, self.settings.index, progress=progress)
        self.runtime.replace_index(index)
        return index.manifest()

    def add(self, corpus: Corpus, *, replace: bool = False, skip_bad_lines: bool = False,
            progress: IndexProgress | None = None) -> DocumentChanges:
        """Add documents (``tanglerag index CORPUS --out DIR --add``), or build the index if there is none yet.

        Identical documents are skipped. A document under a known id with other text (or metadata) is refused
        (``DocumentConflict``, nothing written) unless ``replace``: new text is never dropped silently. The
        stored index keeps its own type and BM25 setting.
        """
        _expect_corpus(corpus)
        read = corpus_reader(corpus, self.settings.index, skip_bad=skip_bad_lines, tiers=authority_tiers(self.settings))
        index, changes = add_streaming(self._folder(), read, self.runtime.embedder, self.settings.index,
                                       replace=replace, progress=progress)
        self.runtime.replace_index(index)
        return changes

    def replace(self, corpus: Corpus, *, skip_bad_lines: bool = False,
                progress: IndexProgress | None = None) -> DocumentChanges:
        """``add`` that replaces changed documents (``--add --replace``): every chunk of the old text goes."""
        return self.add(corpus, replace=True, skip_bad_lines=skip_bad_lines, progress=progress)

    def remove(self, doc_ids: str | Iterable[str]) -> DocumentChanges:
        """Remove documents by id, every chunk of each (``tanglerag index --out DIR --remove IDS``); an id the
        index does not hold is refused (``UnknownDocuments``) and then nothing is removed."""
        ids = [doc_ids] if isinstance(doc_ids, str) else _names("doc_ids", doc_ids, "a document id or a list of them")
        index, changes = passage_index.remove_documents(self._folder(), ids, self.runtime.embedder)
        self.runtime.replace_index(index)
        return changes

    def ask(self, question: str | Question, *, method: str = DEFAULT_METHOD, where: str | None = None,
            history: Sequence[Turn | Mapping[str, str]] = ()) -> Answer:
        """Retrieve from the index and answer with ``method`` (``tanglerag ask``): the answer, its citations, the
        passages shown, usage by stage and the typed trace. A ``Question`` with a ``user_id`` is answered with
        that user's personal context (``--user``). ``where`` retrieves only passages whose document metadata passes
        it (``--where``, e.g. ``"date >= 2024-01-01 and source in (example.org, b.org)"``) instead of
        ``retrieval.where``. ``history``: the conversation before it (``{"role": "user" | "assistant", "content":
        ...}``, oldest first, as ``--history`` reads them); a follow-up that depends on it is made standalone
        first."""
        return self.runtime.answer(self._request(question, method, where, history))

    async def aask(self, question: str | Question, *, method: str = DEFAULT_METHOD, where: str | None = None,
                   history: Sequence[Turn | Mapping[str, str]] = ()) -> Answer:
        """``ask`` for an event loop, awaited on it. Cancelling the awaiting task cancels the question where it
        waits (a model call in a worker thread, the embedded model's, ends first)."""
        return await self.runtime.aanswer(self._request(question, method, where, history))

    def search(self, query: str, *, top_k: int | None = None, where: str | None = None) -> list[RetrievedPassage]:
        """The passages the index ranks first for ``query`` (``tanglerag search``), each with its score and its
        passage's metadata (file path, page, section, date, source), and no model call: retrieval on its own, as
        ``ask`` would retrieve. ``top_k`` in place of ``retrieval.top_k``, ``where`` as ``ask`` takes it."""
        return self.runtime.search(_search_request(query, top_k, where))

    async def asearch(self, query: str, *, top_k: int | None = None,
                      where: str | None = None) -> list[RetrievedPassage]:
        """``search`` for an event loop: the index is searched in a worker thread while the loop goes on."""
        return await self.runtime.asearch(_search_request(query, top_k, where))

    def ask_many(self, questions: Iterable[str | Question], *, method: str = DEFAULT_METHOD,
                 concurrency: int | None = None, progress: Progress | None = None,
                 where: str | None = None) -> list[Answer]:
        """Answer every question, in order, on the evaluation engine's event loop: ``concurrency`` in flight at once
        (default ``eval.concurrency``, else what the LLM backend serves at once; always 1 for a method that
        remembers earlier questions). Each answer equals what ``ask`` gives (``where`` as there); the first error
        stops the batch and is raised.
        """
        _check_asking(method)
        _whole("concurrency", concurrency)
        if isinstance(questions, str):
            raise InputError("questions must be a list of questions, not one str: ask answers one")
        _expect("questions", questions, Iterable, "a list of questions")
        requests = [self._request(q, method, where, ()) for q in questions]
        if not requests:
            return []
        answers: dict[int, Answer] = {}

        async def answer(position: int) -> int:
            answers[position] = await self.runtime.aanswer(requests[position])
            return position

        positions, done = list(range(len(requests))), 0
        for batch in answer_in_batches(answer, positions, self._concurrency(method, concurrency)):
            for _ in batch:
                done += 1
                if progress is not None:
                    progress(done, len(requests))
        return [answers[position] for position in positions]

    def evaluate(self, dataset: PathArg, *, methods: Sequence[str] = ("concat",), metrics: Sequence[str] = (),
                 limit: int | None = None, sample: int | None = None, dataset_format: str | None = None,
                 out: PathArg | None = None, progress: Progress | None = None) -> EvalReport:
        """Score ``methods`` on a question-answering dataset (``tanglerag eval``): a registered name such as
        ``ramdocs-sample`` or a file; ``metrics`` default to each method's own. ``limit`` takes the first
        questions, ``sample`` a seeded random sample (``eval.seed``). With ``out`` the run checkpoints every
        question there (run again, it resumes) and writes results.json, predictions.jsonl and results.md.
        Passage scope, gold handling and concurrency come from ``settings.eval``.
        """
        _expect("dataset", dataset, str | os.PathLike, "a dataset name or file")
        _expect("out", out, str | os.PathLike | None, "a folder path")
        methods, metrics = _names("methods", methods, "a list of method names"), _names("metrics", metrics,
                                                                                          "a list of metric names")
        _whole("limit", limit)
        _whole("sample", sample)
        name, folder = os.fspath(dataset), Path(out) if out is not None else None
        _check_evaluation(name, methods, metrics, folder)
        dataset_name, examples = load_dataset(name, dataset_format, limit, sample, self.settings.eval.seed)
        runner = EvalRunner(self.runtime, metrics=list(metrics) or None)
        report, predictions = runner.run(dataset_name, examples, list(methods), out=folder,
                                         listener=_RunProgress(progress) if progress is not None else None)
        if folder is not None:
            write_outputs(folder, report, predictions)
        return report

    def _folder(self) -> Path:
        """The index folder a build, an add or a removal writes (refused before anything is written when the
        settings name a store, which this folder would not feed)."""
        self.runtime.corpus.refuse_folder_writes()
        if self.index_dir is None:
            raise InputError("this Tanglerag has no index folder: give one, Tanglerag(index_dir)")
        return self.index_dir

    def _request(self, question: str | Question, method: str, where: str | None,
                 history: Sequence[Turn | Mapping[str, str]]) -> AskRequest:
        """What ``ask``, ``aask`` and ``ask_many`` hand the runtime's front door, each argument checked."""
        _check_asking(method)
        _expect("history", history, Sequence, "a list of turns {'role': ..., 'content': ...}")
        try:
            turns = read_turns([t.model_dump() if isinstance(t, Turn) else t for t in history])
        except ValueError as exc:
            raise InputError(f"history: {exc}") from None
        return AskRequest(question=_as_question(question), method=method, history=turns, where=where)

    def _concurrency(self, method: str, wanted: int | None) -> int:
        """The evaluation runner's own rule, with ``wanted`` in place of ``eval.concurrency`` when given."""
        if wanted is None:
            return EvalRunner(self.runtime).concurrency([method])
        if wanted < 1:
            raise InputError(f"concurrency must be at least 1, got {wanted}")
        settings = self.settings.model_copy(update={"eval": self.settings.eval.model_copy(
            update={"concurrency": wanted})})
        return EvalRunner(self.runtime.with_settings(settings)).concurrency([method])


class _RunProgress:
    """A ``RunListener`` for a plain ``(done, total)`` callback; a resumed run starts at what it had answered."""

    def __init__(self, report: Progress) -> None:
        self._report = report
        self._done = self._total = 0

    def started(self, total: int, already_answered: int) -> None:
        self._done, self._total = already_answered, total

    def finished(self, result: QuestionResult) -> None:
        self._done += 1
        self._report(self._done, self._total)


def _as_question(question: str | Question) -> Question:
    _expect("question", question, str | Question, "text or a tanglerag.Question")
    if isinstance(question, Question):
        return question
    try:
        return Question(text=question)
    except ValidationError as exc:  # an empty question, one that is not Unicode text: the caller's to fix
        raise InputError(f"invalid question: {exc.errors()[0]['msg']}") from None


def _search_request(query: str, top_k: int | None, where: str | None) -> SearchRequest:
    """What ``search`` and ``asearch`` hand the runtime, each argument checked as ``ask`` checks its own."""
    _expect("query", query, str, "text")
    _whole("top_k", top_k)
    if top_k is not None and not 1 <= top_k <= MAX_TOP_K:
        raise InputError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k}")
    return SearchRequest(query=query, top_k=top_k, where=where)  # the request reads the filter


def _check_asking(method: str) -> None:
    """What every way of asking takes: a method's name (the filter is read by the request, ``AskRequest.where``)."""
    _expect("method", method, str, "a method name such as 'concat'")


def _expect(name: str, value: object, kinds: type | UnionType | tuple[type, ...], takes: str) -> None:
    """The caller's argument of the wrong type in one line: its name, what it takes and what it got."""
    if not isinstance(value, kinds):
        raise InputError(f"{name} must be {takes}, got {type(value).__name__}")


def _whole(name: str, value: object) -> None:
    """A count left out (None) or given as an int (a bool is not a count)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InputError(f"{name} must be a whole number, got {type(value).__name__}")


def _names(name: str, values: object, takes: str) -> list[str]:
    """Names given as a list, as a list (one str would be read as its letters, a generator spent by a look)."""
    if isinstance(values, str):
        raise InputError(f"{name} must be {takes}, not one str: {name}=[{values!r}]")
    names = list(values) if isinstance(values, Iterable) else None
    odd = next((value for value in names or [] if not isinstance(value, str)), None)
    if names is None or odd is not None:
        got = type(values).__name__ if names is None else f"a {type(values).__name__} holding {type(odd).__name__}"
        raise InputError(f"{name} must be {takes}, got {got}")
    return names


def _check_evaluation(dataset: str, methods: Sequence[str], metrics: Sequence[str], out: Path | None) -> None:
    """Refuse what ``tanglerag eval`` refuses, before anything is loaded or written."""
    if out is not None and out.exists() and not out.is_dir():
        raise InputError(f"out={out} is a file; give a folder for the results and predictions")
    if dataset_task(dataset) == "retrieval":
        raise InputError(f"{dataset} is a retrieval benchmark (ORCA-ShARC): score it with `tanglerag eval`")
    if not methods:
        raise InputError("name at least one method to evaluate")
    for name in methods:
        method_class(name)  # an unknown name is refused with the list of known ones
    check_names(list(metrics))


def build_index(corpus: Corpus, index_dir: PathArg, *, settings: Settings | None = None,
                skip_bad_lines: bool = False) -> IndexManifest:
    """``Tanglerag(index_dir, settings).build(corpus)``: build an index in ``index_dir``."""
    return Tanglerag(index_dir, settings).build(corpus, skip_bad_lines=skip_bad_lines)


def add_documents(corpus: Corpus, index_dir: PathArg, *, replace: bool = False,
                  settings: Settings | None = None) -> DocumentChanges:
    """``Tanglerag(index_dir, settings).add(corpus, replace=replace)``: add documents to the index."""
    return Tanglerag(index_dir, settings).add(corpus, replace=replace)


def replace_documents(corpus: Corpus, index_dir: PathArg, *, settings: Settings | None = None) -> DocumentChanges:
    """``Tanglerag(index_dir, settings).replace(corpus)``: add documents, replacing changed ones."""
    return Tanglerag(index_dir, settings).replace(corpus)


def remove_documents(doc_ids: str | Iterable[str], index_dir: PathArg, *,
                     settings: Settings | None = None) -> DocumentChanges:
    """``Tanglerag(index_dir, settings).remove(doc_ids)``: remove documents, every chunk of each."""
    return Tanglerag(index_dir, settings).remove(doc_ids)


def ask(question: str | Question, index_dir: PathArg, *, method: str = DEFAULT_METHOD,
        settings: Settings | None = None) -> Answer:
    """``Tanglerag(index_dir, settings).ask(question, method=method)``: one answer."""
    return Tanglerag(index_dir, settings).ask(question, method=method)


async def aask(question: str | Question, index_dir: PathArg, *, method: str = DEFAULT_METHOD,
               settings: Settings | None = None) -> Answer:
    """``await Tanglerag(index_dir, settings).aask(question, method=method)``: one answer, cancellable."""
    return await Tanglerag(index_dir, settings).aask(question, method=method)


def ask_many(questions: Iterable[str | Question], index_dir: PathArg, *, method: str = DEFAULT_METHOD,
             concurrency: int | None = None, progress: Progress | None = None,
             settings: Settings | None = None) -> list[Answer]:
    """``Tanglerag(index_dir, settings).ask_many(...)``: every question's answer, in order."""
    return Tanglerag(index_dir, settings).ask_many(questions, method=method, concurrency=concurrency,
                                                   progress=progress)


def evaluate(dataset: PathArg, *, methods: Sequence[str] = ("concat",), metrics: Sequence[str] = (),
             limit: int | None = None, sample: int | None = None, dataset_format: str | None = None,
             out: PathArg | None = None, progress: Progress | None = None, index_dir: PathArg | None = None,
             settings: Settings | None = None) -> EvalReport:
    """``Tanglerag(index_dir, settings).evaluate(dataset, ...)``: the scores of ``methods`` on ``dataset``
    (``index_dir`` for datasets whose questions carry no passages)."""
    return Tanglerag(index_dir, settings).evaluate(dataset, methods=methods, metrics=metrics, limit=limit,
                                                   sample=sample, dataset_format=dataset_format, out=out,
                                                   progress=progress)


def _expect_corpus(corpus: object) -> None:
    """A corpus is a path or a list of passages; bytes are a Sequence too, and would fail deep inside."""
    _expect("corpus", corpus, CORPUS_TYPES, CORPUS_TAKES)
    if isinstance(corpus, bytes | bytearray):
        raise InputError(f"corpus must be {CORPUS_TAKES}, got {type(corpus).__name__}")
