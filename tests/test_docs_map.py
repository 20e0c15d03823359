"""The architecture page's tables of families, stores, loaders and embedders are the registries', and the conflicts
page's rule table is the ledger's (the copy read on GitHub is checked here; the site writes them afresh when it
builds)."""

from pathlib import Path

from tanglerag.catalog import BLOCK, TABLES, filled

DOCS = Path(__file__).parents[1] / "docs"


def test_the_committed_tables_are_the_registries_own():
    pages = [(DOCS / name).read_text() for name in ("architecture.md", "conflicts.md")]
    assert {m.group(2) for page in pages for m in BLOCK.finditer(page)} == set(TABLES)
    for page in pages:
        assert page == filled(page), "regenerate: .venv/bin/python -c \"from tanglerag.catalog import refresh; refresh()\""


def test_the_rule_table_names_every_rule_with_the_ask_it_is_for():
    from tanglerag.methods.ledger.rules import RULES

    table = TABLES["rules"]()
    assert all(f"`{rule.name}`" in table and f"`{rule.example}`" in table for rule in RULES)
    assert "| `informal` | vetting |" in table and "| `grounding` | claim |" in table


def test_a_block_is_filled_with_its_table_whatever_it_held():
    stale = "before\n<!-- catalog:stores -->\n| old |\n<!-- /catalog -->\nafter\n"
    fresh = filled(stale)
    assert "| old |" not in fresh and "`tanglerag.stores.qdrant:QdrantStore`" in fresh and fresh.endswith("after\n")
