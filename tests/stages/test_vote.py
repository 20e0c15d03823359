from tanglerag.stages.vote import Candidate, majority_vote


def test_normalized_majority_and_supporters():
    pool = [Candidate("The Beatles", "a", 1), Candidate("Beatles.", "b", 2), Candidate("Oasis", "c", 3),
            Candidate("unknown", "d", 4, unknown=True)]
    winner, supporters = majority_vote(pool)
    assert winner.text == "The Beatles" and [c.passage_id for c in supporters] == ["a", "b"]


def test_empty_or_all_unknown_pool():
    assert majority_vote([]) == (None, [])
    assert majority_vote([Candidate("unknown", "a", 1, unknown=True)]) == (None, [])
