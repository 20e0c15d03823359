"""The ``personal`` settings section of PCAS (paper 002)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field

from tanglerag.config import Section, TopK


class PersonalConfig(Section):
    """Per-user context store and PCAS parameters (paper 002)."""

    store_dir: Path = Field(default_factory=lambda: Path(os.environ.get("TANGLERAG_HOME", "~/.tanglerag"))
                            .expanduser() / "users")
    beam: TopK = Field(10, description="K: documents retrieved by the question before pairing")
    lam: float = Field(0.6, ge=0.0, le=1.0, description="weight of s(d,q) against s(d,c); 0.6 was best for "
                                                    "MiniLM on ORCA-ShARC dev (docs/results/pcas.md)")
