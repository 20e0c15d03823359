"""Chunks a reader would cut from a file's pieces (its pages, its sections), each saying where it stands.

Why not one chunk per window of each piece, as loaders cut them: on real documentation a piece is often a heading
alone (a chapter's title above its first subsection) or a line of text (a section that points elsewhere), and each
became a chunk of its own, embedded at a cost and taking a top-5 slot from the text it heads (benchmarks/chunking.py;
25 of 504 chunks were a heading alone on the folder of issue 63). And a PDF page that ends mid-sentence left each
half of that sentence in a different chunk, neither of which holds what it says. So:

- a heading joins the text it heads: a piece that holds only its heading goes with the piece after it;
- no chunk has fewer than ``min_words`` words unless its document has nothing else: a short piece joins the
  neighbour nearer to it in the heading tree (the one before it when both are as near), and a window's short tail
  joins the window before it;
- a PDF page that ends mid-sentence takes the words that end the sentence from the next page (``CARRY_WORDS`` at
  most), so the page boundary cuts between sentences.

Pages and sections stay provenance: a chunk lists every page its words come from, and stands in the section most of
its words stand in. ``min_words=0`` keeps the pieces as the loader cut them, each chunked alone (tanglerag's rule
until issue 63).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from tanglerag.errors import IngestError
from tanglerag.loaders.base import Segment

CARRY_WORDS = 80
"""The most words a page gives the page before it to end a sentence (its running head counts); a sentence that runs
on longer (a table, a list) is cut at the page break as before. The probes of benchmarks/chunking.py rank 0-80
alike; 80 keeps whole 80% of the sentences a page break cuts in its four PDFs (40: 72%, 20: 46%)."""

_SENTENCE_END = re.compile(r"(?<=[A-Za-z)\]\"'’”])[.!?][\"')\]’”]*(?=\s|$)")
"""A sentence's end: not the dot of a section number ("3.1.") nor of a version ("Release 12.18")."""
_ENDS_SENTENCE = re.compile(r"[.!?:][\"')\]’”]*\s*$")
_FOLIO = re.compile(r"^\s*(\d+\s.*|.*\s\d+|\d+)\s*$")
"""A page's running foot: its number, alone or beside the chapter's title ("6 Chapter 2. Applying ...")."""
_FOLIO_WORDS = 12


@dataclass(frozen=True)
class Chunk:
    """A chunk's text and its places: the pages its words come from (none for a file without pages), the heading
    path most of its words stand under, and every heading path its words stand under, in reading order (a short
    section joined to its neighbour is named too, not hidden under the neighbour's heading)."""

    text: str
    pages: tuple[int, ...]
    section: tuple[str, ...]
    sections: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class _Piece:
    text: str
    page: int | None
    section: tuple[str, ...]
    body: int
    """Its words after its heading: 0 for a heading alone."""
    joiner: str = "\n\n"
    """What stands between it and the piece before it in one chunk: a line break for a sentence's end carried
    from the next page, a blank line otherwise."""

    @property
    def words(self) -> int:
        return len(self.text.split())


def chunk_words(text: str, size: int, overlap: int) -> list[str]:
    """Split on whitespace into windows of ``size`` words that overlap by ``overlap``."""
    words = text.split()
    return [" ".join(words[start:end]) for start, end in _spans(len(words), size, overlap, 0)]


def placed_chunks(segments: Iterable[Segment], size: int, overlap: int, min_words: int) -> list[Chunk]:
    """A document's chunks from its pieces: windows of ``size`` words overlapping by ``overlap`` (a part that fits
    in one keeps its lines), cut by the rules above (``min_words`` 0: each piece alone)."""
    pieces = [_piece(s.text.strip(), s.page, tuple(s.section)) for s in segments if s.text.strip()]
    if min_words == 0:
        return [chunk for piece in pieces for chunk in _windows([piece], size, overlap, 0)]
    blocks = _merged(_carried(pieces), min_words)
    return [chunk for block in blocks for chunk in _windows(block, size, overlap, min_words)]


def _piece(text: str, page: int | None, section: tuple[str, ...], joiner: str = "\n\n") -> _Piece:
    return _Piece(text, page, section, _body_words(text, section), joiner)


def _body_words(text: str, section: tuple[str, ...]) -> int:
    """How many of the text's words follow its heading: a piece led by its heading (``## Scope``, a setext
    underline, an HTML or Word heading's words) counts the words after it."""
    words = text.split()
    if not section:
        return len(words)
    start = 0
    while start < len(words) and set(words[start]) <= {"#"}:
        start += 1
    heading = section[-1].split()
    if words[start:start + len(heading)] == heading:
        start += len(heading)
        while start < len(words) and set(words[start]) <= set("#=-"):
            start += 1
    return len(words) - start


def _carried(pieces: list[_Piece]) -> list[list[_Piece]]:
    """The pieces in blocks, one a piece, but for the end of a sentence a page breaks, which goes with the page
    before it."""
    blocks: list[list[_Piece]] = []
    for piece in pieces:
        before = blocks[-1][-1] if blocks else None
        if before is not None and before.page is not None and piece.page == before.page + 1 and \
                not ends_sentence(before.text):
            head, rest = _sentence_end(piece)
            if head is not None:
                blocks[-1].append(head)
            if rest is None:
                continue
            piece = rest
        blocks.append([piece])
    return blocks


def ends_sentence(page_text: str) -> bool:
    """Whether a page's text ends a sentence, its running foot (a page number line) left out."""
    lines = page_text.rstrip().splitlines()
    while len(lines) > 1 and len(lines[-1].split()) <= _FOLIO_WORDS and _FOLIO.match(lines[-1]):
        lines.pop()
    return bool(_ENDS_SENTENCE.search(lines[-1])) if lines else True


def _sentence_end(piece: _Piece) -> tuple[_Piece | None, _Piece | None]:
    """The piece's words up to its first sentence end (None when that is past ``CARRY_WORDS``), and the rest
    (None when nothing is left)."""
    found = _SENTENCE_END.search(piece.text)
    if found is None or len(piece.text[:found.end()].split()) > CARRY_WORDS:
        return None, piece
    rest = piece.text[found.end():].strip()
    head = _piece(piece.text[:found.end()], piece.page, piece.section, joiner="\n")
    return head, (_piece(rest, piece.page, piece.section) if rest else None)


def _merged(blocks: list[list[_Piece]], min_words: int) -> list[list[_Piece]]:
    """The blocks with each heading alone joined to what it heads and each short block to a neighbour."""
    out: list[list[_Piece]] = []
    waiting: list[_Piece] = []  # short blocks bound for the next one
    for k, block in enumerate(blocks):
        block = [*waiting, *block]
        waiting = []
        body = sum(p.body for p in block)
        if body and sum(p.words for p in block) >= min_words:
            out.append(block)
        elif k == len(blocks) - 1 and out:
            out[-1].extend(block)
        elif k == len(blocks) - 1:
            out.append(block)  # the document holds nothing longer
        elif not out or not body or _nearer(_section(block), blocks[k + 1], out[-1]):
            waiting = block
        else:
            out[-1].extend(block)
    return out


def _nearer(section: tuple[str, ...], after: list[_Piece], before: list[_Piece]) -> bool:
    """Whether the block after shares more of ``section``'s headings than the block before does."""
    return _shared(section, _section(after)) > _shared(section, _section(before))


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def _section(pieces: list[_Piece]) -> tuple[str, ...]:
    return _main_section([(piece, piece.words) for piece in pieces])


def _main_section(weighted: list[tuple[_Piece, int]]) -> tuple[str, ...]:
    """The heading path most of the words stand under (the first such on a tie); ``weighted``: pieces and how
    many of their words count."""
    words: Counter[tuple[str, ...]] = Counter()
    for piece, count in weighted:
        words[piece.section] += count
    return max(words, key=lambda section: words[section]) if words else ()


def _windows(block: list[_Piece], size: int, overlap: int, min_words: int) -> list[Chunk]:
    """The block's chunks: its text with its lines when it fits in one window, else its words in windows."""
    words = [(word, k) for k, piece in enumerate(block) for word in piece.text.split()]
    if len(words) <= size:
        text = block[0].text + "".join(piece.joiner + piece.text for piece in block[1:])
        return [_chunk(text, [(piece, piece.words) for piece in block])] if words else []
    chunks = []
    for start, end in _spans(len(words), size, overlap, min_words):
        window = words[start:end]
        counts = Counter(k for _, k in window)
        chunks.append(_chunk(" ".join(word for word, _ in window), [(block[k], n) for k, n in counts.items()]))
    return chunks


def _chunk(text: str, weighted: list[tuple[_Piece, int]]) -> Chunk:
    pages = sorted({piece.page for piece, _ in weighted if piece.page is not None})
    # a heading alone (``# Pay`` above its first subsection) is part of the path of what it heads, not a section
    sections = tuple(dict.fromkeys(piece.section for piece, count in weighted if piece.section and piece.body and count))
    return Chunk(text=text, pages=tuple(pages), section=_main_section(weighted), sections=sections)


def _spans(count: int, size: int, overlap: int, min_words: int) -> list[tuple[int, int]]:
    """(start, end) of each window over ``count`` words; a last window shorter than ``min_words`` is taken into
    the one before it."""
    if size <= 0:
        raise IngestError("chunk size must be positive")
    if not 0 <= overlap < size:
        raise IngestError("chunk overlap must be >= 0 and smaller than the chunk size")
    if count <= size:
        return [(0, count)] if count else []
    spans = []
    for start in range(0, count, size - overlap):
        spans.append((start, min(start + size, count)))
        if start + size >= count:
            break
    if len(spans) > 1 and spans[-1][1] - spans[-1][0] < min_words:
        spans[-2:] = [(spans[-2][0], count)]
    return spans
