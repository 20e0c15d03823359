"""The architecture page's tables of families, stores, loaders and embedders are the registries' (the copy read on
GitHub is checked here; the site writes them afresh when it builds)."""

from pathlib import Path

from tanglerag.catalog import BLOCK, TABLES, filled

PAGE = Path(__file__).parents[1] / "docs" / "architecture.md"


def test_the_committed_tables_are_the_registries_own():
    page = PAGE.read_text()
    assert {m.group(2) for m in BLOCK.finditer(page)} == set(TABLES)
    assert page == filled(page), "regenerate: .venv/bin/python -c \"from tanglerag.catalog import refresh; refresh()\""


def test_a_block_is_filled_with_its_table_whatever_it_held():
    stale = "before\n<!-- catalog:stores -->\n| old |\n<!-- /catalog -->\nafter\n"
    fresh = filled(stale)
    assert "| old |" not in fresh and "`tanglerag.stores.qdrant:QdrantStore`" in fresh and fresh.endswith("after\n")
