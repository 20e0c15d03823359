"""Chunks a reader would cut (issue 63): headings go with their text, no short chunk unless the document has
nothing else, a sentence a page break cut stays whole and its chunk names both pages."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tanglerag.config import IndexConfig
from tanglerag.index.corpus import corpus_reader
from tanglerag.ingest import SourceDocument, chunk_passages, file_document
from tanglerag.loaders import Segment
from tanglerag.loaders.chunking import CARRY_WORDS, chunk_words, placed_chunks
from tanglerag.provenance import location, page_of, pages_of, places
from tanglerag.types import Passage

LONG = " ".join(f"word{i}" for i in range(40))


def _markdown(text: str, **options) -> list[Passage]:
    return chunk_passages([file_document("guide.md", text.encode())], "test", **options)


def test_a_heading_alone_never_makes_a_chunk():
    text = f"# Guide\n\n## Install\n\n### Linux\n\n{LONG}\n\n### Windows\n\n{LONG}\n"
    chunks = _markdown(text)
    assert [c.metadata["section"] for c in chunks] == [["Guide", "Install", "Linux"], ["Guide", "Install", "Windows"]]
    assert chunks[0].text.startswith("# Guide\n\n## Install\n\n### Linux\n\nword0")
    before = _markdown(text, min_chunk_words=0)
    assert [c.text for c in before][:2] == ["# Guide", "## Install"]  # what the setting's 0 keeps


def test_a_heading_at_the_end_joins_the_text_before_it_and_a_lone_heading_is_kept():
    chunks = _markdown(f"# Guide\n\n{LONG}\n\n## See also\n")
    assert len(chunks) == 1 and chunks[0].text.endswith("## See also")
    alone = _markdown("# Only a title\n")
    assert [c.text for c in alone] == ["# Only a title"]  # the document has nothing else


def test_a_short_tail_merges_into_the_text_before_it():
    chunks = _markdown(f"# Guide\n\n{LONG}\n\n## Thanks\n\nTo everyone.\n")
    assert len(chunks) == 1 and chunks[0].metadata["section"] == ["Guide"]
    assert chunks[0].text.endswith("## Thanks\n\nTo everyone.")


def test_a_short_window_tail_joins_the_window_before_it():
    pieces = placed_chunks([Segment(text=" ".join(f"w{i}" for i in range(23)), section=["A"])], 10, 0, 5)
    assert [len(c.text.split()) for c in pieces] == [10, 13]
    assert [len(w.split()) for w in chunk_words(" ".join(f"w{i}" for i in range(23)), 10, 0)] == [10, 10, 3]


def test_a_short_section_joins_the_neighbour_nearer_in_the_heading_tree():
    chunks = _markdown(f"# A\n\n{LONG}\n\n## B\n\nShort lead.\n\n### C\n\n{LONG}\n\n## D\n\n{LONG}\n")
    assert [c.metadata["section"] for c in chunks] == [["A"], ["A", "B", "C"], ["A", "D"]]
    assert chunks[1].text.startswith("## B\n\nShort lead.\n\n### C")
    siblings = _markdown(f"# A\n\n## B\n\n{LONG}\n\n## C\n\nShort.\n\n## D\n\n{LONG}\n")
    assert siblings[0].text.endswith("## C\n\nShort.")  # as near either way: it joins the one before


def _pdf(*pages: str) -> SourceDocument:
    segments = [Segment(text=text, page=n) for n, text in enumerate(pages, start=4)]
    return SourceDocument(id="policy.pdf", title="Policy", text="\n\n".join(pages), metadata={"path": "policy.pdf"},
                          segments=segments)


def test_a_sentence_a_page_break_cuts_stays_whole_and_its_chunk_names_both_pages():
    chunks = chunk_passages([_pdf(f"{LONG} The rule applies to every\n12", f"Header\ndocument we keep. {LONG}")],
                            "test")
    first, second = chunks
    assert first.text.endswith("The rule applies to every\n12\nHeader\ndocument we keep.")
    assert first.metadata["page"] == 4 and first.metadata["pages"] == [4, 5] and "pages" not in second.metadata
    assert second.text.startswith("word0") and second.metadata["page"] == 5
    assert location(first.metadata) == "policy.pdf pp. 4-5" and location(second.metadata) == "policy.pdf p. 5"
    assert places(first.metadata) == {"location": "policy.pdf pp. 4-5", "page": 4, "section": None}
    assert page_of(first.metadata) == 4 and pages_of(first.metadata) == [4, 5]


def test_a_page_that_ends_its_sentence_or_a_sentence_too_long_to_carry_is_cut_at_the_page():
    ended = chunk_passages([_pdf(f"{LONG} The end.\n12", f"Next page. {LONG}")], "test")
    run_on = " ".join(["more"] * (CARRY_WORDS + 1))
    long = chunk_passages([_pdf(f"{LONG} and then", f"{run_on} done. {LONG}")], "test")
    for chunks in (ended, long):
        assert [c.metadata["page"] for c in chunks] == [4, 5]
        assert not any("pages" in c.metadata for c in chunks)


def test_a_short_page_joins_a_neighbour_and_both_pages_are_named():
    chunks = chunk_passages([_pdf("Title page.", f"{LONG}.", f"{LONG}.")], "test")
    assert [c.metadata.get("pages") for c in chunks] == [[4, 5], None]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(20, 90), st.sampled_from(["A", "B", "C"]), st.integers(1, 3)), min_size=1,
                max_size=6), st.integers(20, 40), st.integers(41, 80))
def test_nothing_else_changes_for_pieces_long_enough(pieces, overlap, size):
    """Sections with text enough and pages that end their sentences are chunked as before the rule (an overlap of
    20 words or more, as the default 40, leaves no window's tail short)."""
    segments = [Segment(text=f"{' '.join(['w'] * words)}.", section=[name] * depth)
                for words, name, depth in pieces]
    before = placed_chunks(segments, size, overlap, 0)
    assert placed_chunks(segments, size, overlap, 20) == before
    paged = [Segment(text=s.text, page=n) for n, s in enumerate(segments, start=1)]
    assert placed_chunks(paged, size, overlap, 20) == placed_chunks(paged, size, overlap, 0)


def test_documents_without_headings_are_chunked_as_before():
    plain = [Passage(id="a", text=" ".join(["word"] * 450)), Passage(id="b", text="Three short words.")]
    markdown = file_document("notes.md", b"No heading here, only a line.\n")
    for rule in ({}, {"min_chunk_words": 0}):
        chunks = chunk_passages([*plain, markdown], "test", **rule)
        assert [c.id for c in chunks] == ["a#0", "a#1", "a#2", "b", "notes.md"]
        assert chunks[-1].text == "No heading here, only a line.\n"


def test_the_setting_reaches_the_index_reader(tmp_path):
    (tmp_path / "guide.md").write_text(f"# Guide\n\n## Install\n\n{LONG}\n")
    default = list(corpus_reader(tmp_path, IndexConfig())())
    pieces = list(corpus_reader(tmp_path, IndexConfig(min_chunk_words=0))())
    assert len(default) == 1 and [c.text for c in pieces][0] == "# Guide"


def test_a_chunk_that_joins_sections_names_them_all_in_its_place():
    """Issue 69: a two-line "Escalation" section joined to the "Compensation" one before it is named, not hidden."""
    chunks = _markdown(f"# Pay\n\n## Compensation\n\n{LONG}\n\n## Escalation\n\nPage the on-call lead.\n")
    (chunk,) = chunks
    assert chunk.metadata["section"] == ["Pay", "Compensation"]
    assert chunk.metadata["sections"] == [["Pay", "Compensation"], ["Pay", "Escalation"]]
    assert location(chunk.metadata).endswith("§Pay > Compensation; §Pay > Escalation")
    alone = _markdown(f"# Pay\n\n{LONG}\n")
    assert "sections" not in alone[0].metadata  # one section: named once, as before
