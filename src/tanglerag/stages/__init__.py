"""Steps two or more method families share: retrieval (the ``Retriever`` protocol and the index retriever), the
cited answer and post-fusion's single-context prompt, and the majority vote."""
