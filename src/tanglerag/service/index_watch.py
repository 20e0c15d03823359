"""Index versions swapped under load: a served index folder that another process saves a new version of (the one
writer: ``tanglerag index --add``/``--sync``, another server's upload) is picked up between requests.

Every ``service.index_poll_s`` the manifest is read (a small JSON file); when it names another version than the one
serving, that version is loaded in a worker thread while requests go on with the old one, then swapped in
(``Runtime.replace_index``): a request in progress keeps the index it started with, the next one gets the new, and
none sees a version half loaded, since a writer names a version in the manifest only once it is complete. The old
version stays readable while a request uses it: its vectors are in memory and its passages file stays open, so the
writer sweeping its folder (``write_version``) takes nothing from under it. A version that cannot be loaded (damaged,
another embedder) leaves the old one serving and is logged once.
"""

from __future__ import annotations

import asyncio
import logging

from tanglerag.errors import TangleragError
from tanglerag.index.passage_index import PassageIndex, read_manifest
from tanglerag.service.state import ServiceState

log = logging.getLogger(__name__)


async def watch(state: ServiceState, every_s: float) -> None:
    """Follow the served folder's versions until cancelled (the service's lifespan ends)."""
    refused = ""
    while True:
        await asyncio.sleep(every_s)
        try:
            await follow(state)
            refused = ""
        except TangleragError as exc:
            if str(exc) != refused:  # once a version, not every poll
                log.error("a new index version could not be loaded; the one loaded before goes on serving: %s", exc)
            refused = str(exc)


async def follow(state: ServiceState) -> bool:
    """Swap in the version the manifest names when it is not the one serving; whether it did."""
    runtime = state.runtime
    folder = runtime.corpus.versions
    if folder is None or not (folder / "manifest.json").exists():
        return False
    serving = runtime.loaded_index
    named = (await asyncio.to_thread(read_manifest, folder)).data
    if serving is None or named == serving.version:
        return False
    async with state.index_writes:  # not beside this server's own write, which swaps in its version itself
        serving = runtime.loaded_index
        if serving is None or (await asyncio.to_thread(read_manifest, folder)).data == serving.version:
            return False
        fresh = await asyncio.to_thread(PassageIndex.load, folder, runtime.embedder, mmap=runtime.settings.index.mmap)
        runtime.replace_index(fresh)
    log.info("now serving index version %s (%d passages)", fresh.version, len(fresh.passages))
    return True
