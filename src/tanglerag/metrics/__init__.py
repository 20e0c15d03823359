"""Metric registry: per-question scores, averaged by the eval runner."""

from tanglerag.metrics import ambig, long_answer  # noqa: F401  (register ans, ent, ear, d_f1; rouge_l, dr, mrecall@k)
from tanglerag.metrics.registry import METRICS, READER_METRICS, Metric, Reader, compute, register

__all__ = ["METRICS", "READER_METRICS", "Metric", "Reader", "compute", "register"]
