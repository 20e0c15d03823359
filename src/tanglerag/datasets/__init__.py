"""Evaluation datasets: loaders per format, a registry of names, format detection."""

from tanglerag.datasets.base import DatasetError, QAExample
from tanglerag.datasets.registry import load_dataset

__all__ = ["DatasetError", "QAExample", "load_dataset"]
