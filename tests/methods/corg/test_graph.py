from tanglerag.methods.corg.graph import (
    ContextGraph,
    Extraction,
    Relation,
    clean_descriptor,
    parse_extraction,
    parse_relations,
    relation_between,
)
from tanglerag.methods.corg.steps import ContextGraphStep


def test_relations_follow_the_papers_definitions():
    film = Extraction("The Simpsons", "movie", "July 27, 2007")
    show = Extraction("The Simpsons", "", "December 17, 1989")
    film_again = Extraction("Simpsons", "the movie", "27 July 2007")
    film_wrong = Extraction("The Simpsons", "Movie", "1995")
    game = Extraction("The Simpsons", "video game", "1991")
    bare_film = Extraction("The Simpsons", "", "July 27, 2007")
    silent = Extraction("The Simpsons", "movie", None)
    assert relation_between(film, film_wrong, 0.6) is Relation.COUNTERFACTUAL
    assert relation_between(film, game, 0.6) is Relation.DISTRACTING
    assert relation_between(film, bare_film, 0.6) is Relation.AMBIGUOUS
    assert relation_between(film, show, 0.6) is Relation.NONE
    assert relation_between(film, silent, 0.6) is Relation.NONE
    assert relation_between(show, Extraction("Simpsons", "", "December 17, 1989"), 0.6) is Relation.DUPLICATED
    assert relation_between(film, film_again, 0.5) is Relation.DUPLICATED  # loose descriptor/answer match


def test_parse_extraction_and_descriptor_cleaning():
    got = parse_extraction("Entity: The Simpsons\nDescriptor: None\nAnswer: December 17, 1989")
    assert got == Extraction("The Simpsons", "", "December 17, 1989")
    assert parse_extraction("- Entity: X\n- Descriptor: 1979 film\n- Answer: unknown").answer is None
    assert parse_extraction("I could not find it.") is None
    assert clean_descriptor("N/A") == "" and clean_descriptor("The Simpsons", "the simpsons") == ""
    assert clean_descriptor("ice hockey") == "ice hockey"


def test_parse_relations_reads_several_styles_and_ignores_unasked_numbers():
    text = "[2] - Duplicated\nContext 3: counterfactual\n4 - none\n7 - distracting\n[2] - none"
    assert parse_relations(text, [2, 3, 4]) == {2: Relation.DUPLICATED, 3: Relation.COUNTERFACTUAL, 4: Relation.NONE}
    # the focal context repeated first: the asked-about number counts
    assert parse_relations("[1] - [2] duplicated\n[1] - [3] distracting", [2, 3]) == {
        2: Relation.DUPLICATED, 3: Relation.DISTRACTING}


def test_graph_round_trips_through_the_trace_step():
    graph = ContextGraph.empty(["a", "b", "c"], "pairwise")
    graph.set(0, 1, Relation.DUPLICATED, "llm")
    graph.set(0, 2, Relation.COUNTERFACTUAL, "mirrored")
    graph.pairs_judged = 2
    step = ContextGraphStep.model_validate_json(graph.to_step().model_dump_json())
    assert [(e.source, e.target, e.relation, e.origin) for e in step.edges] == [
        ("a", "b", "duplicated", "llm"), ("a", "c", "counterfactual", "mirrored")]
    again = ContextGraph.from_step(step)
    assert again.relation(1, 0) is Relation.DUPLICATED and again.relation(1, 2) is None
    assert again.graph.nodes[2]["passage_id"] == "c" and again.pairs_judged == 2 and again.pairs_total == 3
    assert again.pairs(Relation.COUNTERFACTUAL) == [(0, 2)]
