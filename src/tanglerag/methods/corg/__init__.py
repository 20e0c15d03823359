"""Paper 000, COrg: the context graph (constructor, graph, prompts), the reranker, plural questions, the
multi-answer generation, its six baselines, settings section and trace steps."""
