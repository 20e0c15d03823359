"""The ``store`` settings section: which vector store the passages live in (the embedded faiss + SQLite index by
default), where it is, which collection, and how a collection tanglerag did not write keeps each part of a passage.

Why a module of its own in the core layer: ``Settings`` (core) holds every section, while the stores themselves
(``tanglerag.stores``) sit a layer up beside the index; the section and its ``FieldMapping`` need nothing but pydantic,
so they live here and ``stores/base.py`` re-exports ``FieldMapping`` with the rest of the contract.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tanglerag.config import Section


class FieldMapping(BaseModel):
    """Where a collection keeps each part of a passage: payload field names. The defaults are what tanglerag writes;
    set them once in settings (``store.fields``) to read a collection another tool wrote. ``id`` None: the store's
    own point id. Payload fields not named here become the passage's metadata."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str | None = Field("id", description="payload field of the passage id (None: the store's own id)")
    text: str = "text"
    title: str | None = "title"
    date: str | None = "date"
    source: str | None = "source"
    authority: str | None = "authority"

    @property
    def named(self) -> dict[str, str | None]:
        """The provenance fields a passage's metadata takes under its own names: ``date``, ``source``,
        ``authority``, each the payload field that holds it (None: not held)."""
        return {"date": self.date, "source": self.source, "authority": self.authority}


class StoreConfig(Section):
    """``store``: where ``ask``, ``eval``, ``serve`` and ``search`` read passages from, and ``index --store`` writes
    them. ``embedded`` is the index folder given with ``--index`` (the other keys are not read then)."""

    backend: str = Field("embedded", min_length=1, description=(
        "embedded: the faiss + SQLite index of --index; qdrant, lancedb, chroma, pgvector: a collection of that store "
        "(pip install 'tanglerag[qdrant]' and so on); a plug-in's name (the tanglerag.stores entry-point group)"))
    url: str | None = Field(None, description="a store server's address (qdrant: http://host:6333; chroma: "
                                              "http://host:8000; pgvector: postgresql://user@host/db); None: the "
                                              "store's embedded mode at path")
    path: Path | None = Field(None, description="the folder of a store's embedded (local) mode")
    collection: str = Field("tanglerag", min_length=1, max_length=255, description="the collection (table) to use")
    fields: FieldMapping = Field(default_factory=FieldMapping, description=(
        "which payload field holds the text, title, date, source and authority (a collection another tool wrote)"))
    timeout_s: float = Field(10.0, gt=0, le=600, description="seconds one call to a store server may take")
    api_key_env: str | None = Field(None, description=(
        "the environment variable holding the store server's API key (e.g. QDRANT_API_KEY): the key itself is never "
        "written in settings"))
