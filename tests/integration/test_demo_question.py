"""The README's main command on the real embedded model: a question about two same-name works, both answered.

`scripts/demo.sh` indexes the bundled sample and asks its default question with its method; this test does the
same through the Python API and checks that each of the two composers comes back with a citation of a passage
that names them.
"""

import re
from pathlib import Path

import pytest

from tanglerag.index.passage_index import store_passages
from tanglerag.ingest import load_corpus
from tanglerag.runtime import Runtime
from tanglerag.settings import Settings
from tanglerag.types import Question

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).parents[2]
DEMO = (ROOT / "scripts/demo.sh").read_text()


def test_demo_question_gets_both_answers_with_citations(tmp_path):
    question = re.search(r'QUESTION="\$\{1:-(.+)\}"', DEMO)[1].replace('\\"', '"')
    method = re.search(r"--method (\S+)", DEMO)[1]
    # the CLI's own LLM and embedder, built from the defaults; no cache, so every call reaches llama.cpp
    settings = Settings.load(overrides=[f"personal.store_dir={tmp_path / 'users'}", "llm.cache=false"])
    runtime = Runtime(settings, index_dir=tmp_path / "index")
    store_passages(tmp_path / "index", load_corpus(ROOT / "src/tanglerag/sample_data/sample_corpus.jsonl"),
                   runtime.embedder, settings.index)
    answer = runtime.pipeline(method).ask(Question(text=question))
    texts = {h.passage.id: h.passage.text for h in answer.passages}
    for composer in ("Brahms", "Mozart"):
        part = next((p for p in answer.parts if composer in p.answer), None)
        assert part is not None, answer.text
        assert part.citations and any(composer in texts[c] for c in part.citations), (composer, answer.text)
