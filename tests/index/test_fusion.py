from tanglerag.index.fusion import reciprocal_rank_fusion


def test_items_ranked_well_in_both_lists_win():
    fused = reciprocal_rank_fusion([[1, 2, 3], [3, 1, 4]], k=60)
    assert [i for i, _ in fused] == [1, 3, 2, 4]
    assert fused[0][1] == 1 / 61 + 1 / 62
