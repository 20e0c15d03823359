from tanglerag.stages.multi_answer import merge_parts, parse_parts, render
from tanglerag.types import AnswerPart, Passage, RetrievedPassage


def hits(n):
    return [RetrievedPassage(passage=Passage(id=f"d{i}", text=f"text {i}"), score=1.0, rank=i) for i in range(n)]


def test_parse_parts_is_lenient_and_drops_bad_citations():
    raw = "- Mahesh Bhatt | 1979 film | [1][2]\n2. Shibu Mitra (1997 film) [3] [9]\nunknown\n\n| |"
    parts = parse_parts(raw, hits(3), group=0)
    assert [(p.answer, p.descriptor, p.citations) for p in parts] == [
        ("Mahesh Bhatt", "1979 film", ["d0", "d1"]), ("Shibu Mitra", "1997 film", ["d2"])]
    nested = parse_parts("Mahesh Bhatt (Lahu Ke Do Rang (1979 film)) [1]", hits(1), group=None)[0]
    assert (nested.answer, nested.descriptor) == ("Mahesh Bhatt", "Lahu Ke Do Rang (1979 film)")
    assert parse_parts("unknown", hits(3), 0) == []


def test_merge_and_render_cite_positions_in_the_full_list():
    passages = hits(4)
    parts = [AnswerPart(answer="AFL", descriptor="footballer", citations=["d3"], group=0),
             AnswerPart(answer="afl", descriptor="Footballer", citations=["d1", "d3"], group=1),
             AnswerPart(answer="NBA", citations=["d2"], group=1)]
    merged = merge_parts(parts)
    assert len(merged) == 2 and merged[0].citations == ["d3", "d1"]
    text, cited = render(merged, passages)
    assert text == "AFL (footballer) [4][2]\nNBA [3]" and cited == ["d3", "d1", "d2"]


def test_a_parts_reply_reads_as_lines_while_it_is_written():
    from tanglerag.stages.multi_answer import parts_so_far

    assert parts_so_far({"answers": [{"answer": "Mozart", "about": "the quintet in C"}, {"answer": "Bra"}]}) == (
        "Mozart — the quintet in C\nBra")
    assert parts_so_far({}) == "" and parts_so_far({"answers": [{"about": "no answer yet"}]}) == ""
