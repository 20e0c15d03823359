"""Metric registry: per-question scores, averaged by the eval runner."""

from tanglerag.metrics import ambig  # noqa: F401  (registers ans, ent, ear, d_f1)
from tanglerag.metrics.registry import METRICS, READER_METRICS, Metric, Reader, compute, register

__all__ = ["METRICS", "READER_METRICS", "Metric", "Reader", "compute", "register"]
