from tanglerag.provenance import location, page_of, section_of


def test_a_citation_names_the_file_its_page_and_its_heading_path():
    assert location({"path": "hr/policy-2024.pdf", "page": 12, "section": ["Scope", "Limits"]}) == (
        "policy-2024.pdf p. 12, §Scope > Limits")
    assert location({"path": "notes.md", "section": ["Intro"]}) == "notes.md §Intro"
    assert location({"page": 3}) == "p. 3"


def test_no_place_without_a_page_or_section_and_bad_values_left_out():
    assert location({"path": "notes.txt"}) is None and location({}) is None
    assert page_of({"page": True}) is None and page_of({"page": 0}) is None and page_of({"page": "3"}) is None
    assert section_of({"section": []}) is None and section_of({"section": [1]}) is None
    assert section_of({"section": "Scope"}) == ["Scope"]


def test_sections_are_named_only_when_there_are_two_good_ones():
    from tanglerag.provenance import sections_of

    assert sections_of({"sections": [["A"], ["B", "C"]]}) == [["A"], ["B", "C"]]
    assert sections_of({"sections": [["A"]]}) is None and sections_of({"sections": [["A"], []]}) is None
    assert location({"path": "n.md", "section": ["A"], "sections": "junk"}) == "n.md §A"
