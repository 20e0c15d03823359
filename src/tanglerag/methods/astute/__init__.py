"""Astute RAG ("Overcoming Imperfect Retrieval Augmentation and Knowledge Conflicts for Large Language Models",
Wang et al., ACL 2025): the model's own knowledge beside the retrieved documents, consolidated with their sources
in view, and the answer chosen by how reliable its support is."""
