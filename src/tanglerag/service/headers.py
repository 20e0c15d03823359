"""Headers on every response: no other site may frame the inspector, run scripts in it or make a reply be read as
another type.

The pages load their scripts and styles from this server only and hold no inline script, so the policy allows
nothing else; the one exception is the ``style`` attribute, which the step views set from script (a colour in
COrg's legend, an indent in Diva's tree): an attribute carries no script.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",  # scripts, styles, fetches, images: this server's own; no inline script, no eval
    "style-src-attr 'unsafe-inline'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",  # with X-Frame-Options for browsers that predate it
])
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
}


class SecurityHeaders:
    """Adds ``SECURITY_HEADERS`` to every response the app sends, streamed ones included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)
