"""Saved web pages and HTML documentation: the main text without navigation, headers, footers, scripts or forms,
cut at its headings (``h1``-``h6``) into sections, with the title, date, author and canonical address the page
declares.

Why our own small extractor on lxml rather than trafilatura: trafilatura judges boilerplate by text density, which
drops the short pages documentation is made of, and brings dateparser, babel and tld (tens of MB); the page's own
markup (``main``, ``article``, ``nav``, ``role=...``) says what is content on the pages people save.

A page is counted before lxml builds its tree (``bounds.HTML_ELEMENTS``): millions of elements take gigabytes and,
past libxml2's own limits, fail inside lxml.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from tanglerag.loaders import bounds
from tanglerag.loaders.base import Loaded, Segment, UnreadableFile, looks_binary

_DROP = ("script", "style", "noscript", "template", "nav", "aside", "form", "button", "select",
         "svg", "iframe", "object", "canvas", "menu", "dialog")
_DROP_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar"}
_BLOCKS = {"p", "div", "section", "article", "main", "li", "dd", "dt", "pre", "blockquote", "table", "tr", "ul",
           "ol", "dl", "br", "hr", "figure", "figcaption", "address", "td", "th", "caption", "body"}
_BOILERPLATE_NAME = re.compile(r"(?<![a-z0-9])(nav|navbar|navigation|nav-panel|menu|sidebar|breadcrumbs?|header|footer|"
                               r"masthead|cookies?|share|social|pagination|skip-link|related)(?![a-z0-9])", re.I)
"""Class or id words that name a page's furniture (texinfo's ``nav-panel``, Sphinx's ``sphinxsidebar``...)."""
_HEADING = re.compile(r"^h([1-6])$")
_DATE_META = ("article:published_time", "datepublished", "date", "dc.date", "dc.date.issued", "dcterms.date",
              "dcterms.issued", "pubdate", "publish-date", "article:modified_time", "dcterms.modified",
              "last-modified")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def load_html(name: str, data: bytes) -> Loaded:
    """The page's main content in sections; a page without any text is an ``UnreadableFile``."""
    import lxml.etree
    import lxml.html

    if looks_binary(data):
        raise UnreadableFile(f"{name}: looks binary, not HTML")
    if data.count(b"<") - data.count(b"</") > bounds.HTML_ELEMENTS:  # tags opened: elements, comments, stray '<'s
        raise UnreadableFile(f"{name}: over {bounds.HTML_ELEMENTS:,} elements (ingest bound)")
    try:
        root = lxml.html.document_fromstring(data, parser=lxml.html.HTMLParser(encoding=_undeclared_utf8(data)))
        detected = _page_metadata(root)
        title = _title(root)
        body = _main(root)
        segments = _sections(body) if body is not None else []
    except (lxml.etree.LxmlError, ValueError) as exc:
        raise UnreadableFile(f"{name}: not readable as HTML ({type(exc).__name__}: {exc})") from None
    if not segments:
        raise UnreadableFile(f"{name}: no text in the page's main content")
    return Loaded(segments=segments, title=title, detected=detected)


def _main(root: Any) -> Any:
    """The element holding the page's content: ``main``, a single ``article`` or ``role=main``, else the body;
    boilerplate elements removed from it."""
    for element in list(root.iter()):
        if not isinstance(element.tag, str):  # comments and processing instructions
            element.drop_tree() if element.getparent() is not None else None
            continue
        if _boilerplate(element) and element.getparent() is not None:
            element.drop_tree()
    for path in ("//main", "//*[@role='main']"):
        found = root.xpath(path)
        if found:
            return found[0]
    articles = root.xpath("//article")
    if len(articles) == 1:
        return articles[0]
    bodies = root.xpath("//body")
    return bodies[0] if bodies else root


def _boilerplate(element: Any) -> bool:
    """Navigation, page headers and footers, scripts, forms, hidden parts; an article's own header (its title and
    date) and footer are content."""
    if element.tag in ("header", "footer"):
        return not any(a.tag in ("main", "article") for a in element.iterancestors())
    if element.tag in _DROP or (element.get("role") or "").lower() in _DROP_ROLES or \
            element.get("hidden") is not None or element.get("aria-hidden") == "true":
        return True
    named = f"{element.get('class') or ''} {element.get('id') or ''}"
    return not _HEADING.match(element.tag) and _BOILERPLATE_NAME.search(named) is not None


def _sections(element: Any) -> list[Segment]:
    """The element's text cut at headings: each piece led by its heading, with the path of headings above it."""
    cutter = _Cutter()
    cutter.walk(element)
    cutter.close()
    return cutter.segments


class _Cutter:
    """Walks an element tree gathering text, and starts a new piece at each heading."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.path: list[tuple[int, str]] = []
        self.parts: list[str] = []

    def close(self) -> None:
        text = _tidy("".join(self.parts))
        if text:
            self.segments.append(Segment(text=text, section=[h for _, h in self.path]))
        self.parts.clear()

    def heading(self, level: int, words: str) -> None:
        self.close()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, words))
        self.parts.append(words + "\n")

    def walk(self, node: Any) -> None:
        heading = _HEADING.match(node.tag) if isinstance(node.tag, str) else None
        words = _ANCHOR_MARK.sub("", " ".join(node.text_content().split())) if heading else ""
        if heading and words:
            self.heading(int(heading[1]), words)
        elif not heading:
            block = node.tag in _BLOCKS
            self.parts.append("\n" if block else "")
            if node.tag == "pre":
                self.parts.append(node.text_content())
            else:
                self.parts.append(node.text or "")
                for child in node:
                    self.walk(child)
            self.parts.append("\n" if block else "")
        self.parts.append(node.tail or "")


def _undeclared_utf8(data: bytes) -> str | None:
    """"utf-8" for a page that declares no charset and reads as UTF-8 (libxml2 would take it for Latin-1: "Â¶" for
    "¶"); None lets the page's own declaration, or libxml2's guess, decide."""
    if b"charset" in data[:4096].lower():
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "utf-8"


_ANCHOR_MARK = re.compile(r"\s*[¶#]+$")
"""The permalink mark documentation generators put after a heading (Sphinx's ``¶``, others' ``#``): not its words."""


def _tidy(text: str) -> str:
    """Runs of spaces as one, blank lines as one, no space at a line's ends."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _title(root: Any) -> str | None:
    for path in ("//meta[@property='og:title']/@content", "//title//text()", "//h1//text()"):
        found = " ".join(" ".join(str(t) for t in root.xpath(path)).split())
        if found:
            return found
    return None


def _page_metadata(root: Any) -> dict[str, str]:
    """The date, author and canonical address the page declares in its head (or a ``time`` element)."""
    metas: dict[str, str] = {}
    for meta in root.xpath("//meta"):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or meta.get("http-equiv") or "")
        value = (meta.get("content") or "").strip()
        if key and value:
            metas.setdefault(key.strip().lower(), value)
    found: dict[str, str] = {}
    for key in _DATE_META:
        date = iso_date(metas.get(key))
        if date:
            found["date"] = date
            break
    else:
        times = root.xpath("//time/@datetime")
        date = iso_date(str(times[0])) if times else None
        if date:
            found["date"] = date
    author = metas.get("author") or metas.get("article:author") or metas.get("dc.creator")
    if author:
        found["author"] = author
    canonical = root.xpath("//link[@rel='canonical']/@href")
    url = str(canonical[0]).strip() if canonical else metas.get("og:url", "")
    if url.startswith(("http://", "https://")):
        found["url"] = url
    return found


def iso_date(value: str | None) -> str | None:
    """The first real ``YYYY-MM-DD`` date in ``value`` as ISO text, else None."""
    found = _ISO_DATE.search(value or "")
    if not found:
        return None
    try:
        return datetime.date(*map(int, found.groups())).isoformat()
    except ValueError:
        return None
