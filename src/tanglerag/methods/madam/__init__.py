"""MADAM-RAG ("Retrieval-Augmented Generation with Conflicting Evidence", Wang et al., 2025), the peer a user with
conflicting and ambiguous sources compares us with: one agent per document, an aggregator, debate rounds."""
