"""The Hugging Face reader's loading code, exercised on a tiny randomly initialised model made here."""

import sys

import pytest

from tanglerag.metrics.readers import HFReader, ReaderError, build_reader

pytestmark = pytest.mark.xdist_group("torch")  # the tests that load torch (MiniLM, a reader) share a worker: one ~8 s import


@pytest.fixture(scope="module")
def tiny_qa_model(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("tiny-qa")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "who", "plays", "ice", "hockey", "football", "he", "?"]
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    config = transformers.BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    transformers.BertForQuestionAnswering(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_hf_reader_loads_a_local_model_and_returns_a_span(tiny_qa_model):
    reader = build_reader(str(tiny_qa_model), llm=None)
    assert isinstance(reader, HFReader)
    answer = reader.read("he plays ice hockey", "who plays hockey ?")
    assert isinstance(answer, str) and answer in "he plays ice hockey"  # a span of the text, or no answer


def test_hf_reader_names_a_missing_model(tmp_path):
    with pytest.raises(ReaderError, match="cannot load QA reader"):
        HFReader(str(tmp_path / "nowhere")).read("text", "question?")


def test_hf_reader_without_transformers_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # as in the default install, which has no torch
    with pytest.raises(ReaderError, match=r"needs transformers and torch: pip install 'tanglerag\[st\]'"):
        HFReader("deepset/roberta-base-squad2").read("text", "question?")
