"""Paper 003, CDIT: the consistency judges (LLM and spaCy CMD parsing), the determiner that reuses verdicts
of close queries, and the curation pass that trims the index (``curate``). The index itself honours
the separations it records (``index/trim.py``, ``index/hnsw_edit.py``): any search applies them."""
