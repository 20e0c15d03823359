"""Paper 001, Diva: ambiguity types, pseudo-interpretations, diversified retrieval, verification and adaptive
generation, with its baselines (closed-book, query refinement, vanilla RAG, ToC, the oracle)."""
