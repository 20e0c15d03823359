"""BM25 stems words (issue 69: "acknowledged" did not find "acknowledge"), saves that choice with its part, and a
part saved before stemming stays as it was built."""

from tanglerag.index.sparse import BM25Index

TEXTS = ["Incidents must be acknowledged within fifteen minutes.", "The office opens at nine.",
         "Escalations go to the duty manager."]


def test_a_keyword_search_finds_the_other_forms_of_a_word():
    stemmed = BM25Index.build(TEXTS)
    assert [i for i, _ in stemmed.search("who acknowledges an incident", 3)] == [0]
    assert BM25Index.build(TEXTS, stemmer=None).search("who acknowledges an incident", 3) == []  # as written


def test_the_stemmer_is_saved_with_the_part_and_an_older_part_loads_unstemmed(tmp_path):
    BM25Index.build(TEXTS).save(tmp_path / "new")
    assert (tmp_path / "new" / "stemmer.txt").read_text() == "english"
    assert [i for i, _ in BM25Index.load(tmp_path / "new").search("escalate", 3)] == [2]
    BM25Index.build(TEXTS, stemmer=None).save(tmp_path / "old")
    old = BM25Index.load(tmp_path / "old")
    assert old.stemmer is None and old.search("escalate", 3) == [] and old.search("escalations", 3)[0][0] == 2
