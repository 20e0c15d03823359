"""What the service's ASGI middlewares share: handing on a request body they had to read whole."""

from __future__ import annotations

from starlette.types import Message, Receive


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app ``body`` (already read by a middleware) as the whole request, then whatever
    the server sends next (a disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
