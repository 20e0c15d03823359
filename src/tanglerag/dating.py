"""The date a document gives itself in its words, for documents whose metadata has none: "Last updated: 3 May
2021", "approved at the board meeting of 3 May 2020", "in force from 1 July 2023", a changelog's dated version
heading, a chat export's first timestamp, an e-mail's Date: line.

Why a core module: ingest reads a file's own date from its whole text once (the chunk a question retrieves may be one
without the stamp: the amended page's rules, not its heading), and the ledger reads it from passages given without
an index; both read dates alike. A date it finds is marked as found in the text (``date_from: text``), so a reader
can tell it from a date a person declared; the trust setting treats both as the document's own declaration. A file
whose words state no date either may be dated by its name (``name_date``: "minutes-2023-05-04.md"), marked
``date_from: name``.
"""

from __future__ import annotations

import datetime
import re

DATE = (r"(?:(?P<iso>\d{4}-\d{2}-\d{2})|(?P<ym>\d{4}-\d{2})|(?P<mdy>[a-z]+\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4})|"
         r"(?P<dmy>\d{1,2}(?:st|nd|rd|th)? (?:of )?[a-z]+\.?,? \d{4})|(?P<my>[a-z]+\.?,? \d{4})|(?P<year>\d{4}))(?![\w\u2010-\u2015-])")
_FORMATS = {"iso": ("%Y-%m-%d",), "ym": ("%Y-%m",), "mdy": ("%B %d %Y", "%b %d %Y"), "dmy": ("%d %B %Y", "%d %b %Y"),
            "my": ("%B %Y", "%b %Y"), "year": ("%Y",)}
_WHOLE = {"ym": "month", "my": "month", "year": "year"}  # names that stand for a whole month or year, else a day
_WEEKDAY = r"(?:\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day,?)?"
"""A weekday a date may be written with ("from Sunday 26 January 2025"): part of the date's words, not the date."""
_EFFECTIVE = re.compile(r"\b(?:in (?:force|effect)|effective|valid|applies|takes effect)(?:\s*:)?"
                        r"(?:\s+(?:from|on|since|as of))?(?:\s+the)?" + _WEEKDAY + r"\s+" + DATE, re.IGNORECASE)
"""The date a text takes effect ("in force from 1 October 2023", "effective 1 March 2024"): when a page gives both
the day it was adopted and the day it applies, it stands for what holds from the second."""
_DATING = re.compile(r"\b(?:(?:as of|as at|updated|revised|reviewed|edited|dated|checked|in (?:force|effect)|valid|applies|"
                     r"date)(?:\s*:)?(?:\s+(?:on|in|from|since|at|of))?|(?:published|posted|issued|released|"
                     r"extracted|printed|compiled|approved|adopted|effective|agreed|signed|amended|meeting)(?:\s*:)?"
                     r"(?:(?:\s+[\w'-]+){0,6}?(?:\s+(?:on|in|from|since|at|of)|,))?)"
                     + _WEEKDAY + r"\s+" + DATE, re.IGNORECASE)
"""A document's own date in its words: "As of June 12, 2018, ...", "revised in 2019:", "(published on 3 May 2021)",
"Last updated: 2019-05-03", "approved at the board meeting of 3 May 2020", "Adopted by the governors on 12 May
2022", "in force from 1 July 2023", "Effective: March 2022", "Published by the Tourism Office, April 2023",
"extracted from the register on 3 October 2024". A verb of adoption or publication may stand up to six
words from its date ("adopted by the governors on"); "as of" and the like must be followed by it ("as of the census
of 2010" is what a figure counts, not when the page was written)."""
_HEADING_DATE = re.compile(r"^(?:#{1,6}[^\n]*?\bv?\d+\.\d+(?:\.\d+)?\b[^\n]*?\b(\d{4}-\d{2}-\d{2})\b|"
                           r"\W{0,2}v?\d+\.\d+(?:\.\d+)?\s*[-(\[\u2013]\s*(\d{4}-\d{2}-\d{2})\s*[)\]]?\s*$)",
                           re.MULTILINE)
"""A changelog's version heading with its date ("## 2.4.0 - 2024-06-11", "### [3.1] (2023-02-01)", a plain text
release history's "1.6.0 (2024-04-02)" line, a version and its date alone: a price table's "| 12.50 | 2023-05-01 |"
is none): the newest such heading dates the passage, as the release notes it holds are that release's."""
_DATE_LINE = re.compile(r"^[^\w\n]{0,3}(?:(?:issue|edition|newsletter)\b[^\n]{0,20}?[,:\u2013\u2014-]\s*)?" + DATE
                        + r"[^\w\n]{0,3}$", re.IGNORECASE | re.MULTILINE)
"""A line of a document's head that is a date and nothing else, as a newsletter, a letter or minutes give theirs
("November 2024" under the masthead, "Issue 12 - 3 March 2024"); a bare year is no such line (a heading "2023")."""
_HEAD_LINES = 3
"""How many of a document's first lines may be its date line or its dated title: further down, a line holding a
date alone is a table's cell ("Incorporated on" / "14 August 2009" in a register's extract), not the page's date."""
_TITLE_FROM = re.compile(r"\A(?:[^\n]{0,80}\n)?[^\n]{0,80}?\b(?:from|starting|beginning)" + _WEEKDAY + r"\s+" + DATE,
                         re.IGNORECASE)
"""A first or second line that says from when it holds ("New fares from 1 March 2024", "Route 7: changes from Sunday 26
January 2025", f-greyling-buses-1): a notice's title states its date."""
_CHAT_STAMP = re.compile(r"\A(?:[^\n]*\n){0,3}?\W{0,3}(\d{4}-\d{2}-\d{2})[ T]\d{1,2}:\d{2}")
"""A chat export's first message time ("[2024-03-05 10:12] ana: ..."), on one of its first lines (a header such as
"Slack export - channel #general" may come first): when the conversation took place."""
_SLASHED_STAMP = re.compile(r"^\W{0,3}(\d{1,2})/(\d{1,2})/(\d{4}|\d{2}),?\s+\d{1,2}[:.]\d{2}(?::\d{2})?\s*"
                            r"([ap]\.?m\.?)?\]?\s*(?:-\s*)?[^\s:\[\]][^:\n]{0,40}:", re.MULTILINE | re.IGNORECASE)
"""A chat export's message time written with slashes and followed by who wrote, as WhatsApp writes it ("[12/06/2024,
08:14] Lauren B: ...", "6/13/24, 8:14 PM - Al: ..."): day first unless a stamp of the export can only be month first or
the clock has AM and PM (the US export), the first one on one of the export's first lines dating the conversation
(f-yarrowfield-ferry-1). A table's row of dates and times is no chat: it names no writer."""
_STAMP_CHARS = 300
"""How far from a passage's start or end a date stamp is looked for: "a work by Brahms published in 1890" in the
middle of an article is what it is about, not when it was written."""


_SEASON = re.compile(r"^(spring|summer|autumn|fall|winter)\.?,? (\d{4})$", re.IGNORECASE)
_SEASONS = {"spring": 5, "summer": 8, "autumn": 11, "fall": 11, "winter": 12}
"""A season by the month it ends in (northern hemisphere; winter as the year's last month)."""


def parsed(match: re.Match[str]) -> tuple[datetime.date, str] | None:
    """The date a match names, as its first day and its precision ("day", "month", "year"); None when its words are
    no date ("May 32, 2019")."""
    kind, text = next((k, v) for k, v in match.groupdict().items() if v)
    season = _SEASON.match(text)
    if kind == "my" and season is not None:  # "autumn 2022": the season's last month, so "as of" takes all of it
        return datetime.date(int(season[2]), _SEASONS[season[1].lower()], 1), "month"
    cleaned = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b| of\b", "", text, flags=re.IGNORECASE)
    cleaned = cleaned.replace(",", "").replace(".", "").replace("Sept ", "Sep ").replace("sept ", "sep ")
    for pattern in _FORMATS[kind]:
        try:
            return datetime.datetime.strptime(cleaned, pattern).date(), _WHOLE.get(kind, "day")
        except ValueError:
            continue
    return None


_EARLIEST = 1900
"""The earliest year a document stamp is read as: "updated 1200 records" names a count, not the year 1200."""


_MAIL_HEADER = re.compile(r"\A(?:[ \t]*(?:from|to|cc|bcc|reply-to|subject|date|sent)[ \t]*:[^\n]*\n)+", re.IGNORECASE)
_MAIL_DATE = re.compile(r"^[ \t]*(?:date|sent)[ \t]*:[ \t]*([^\n]+)", re.IGNORECASE | re.MULTILINE)


def mail_date(text: str) -> datetime.date | None:
    """The day an e-mail was sent, from the ``Date:`` (or Outlook's ``Sent:``) line of the header block it opens with
    ("Date: Mon, 11 Mar 2024 10:03:55 +0000", "Sent: 8 April 2024"), read by the standard library's RFC 2822 parser,
    else dateutil's; None for a text that opens with no header block or a date neither reads."""
    header = _MAIL_HEADER.match(text.lstrip())
    found = _MAIL_DATE.search(header[0]) if header is not None else None
    if found is None:
        return None
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(found[1].strip()).date()
    except (TypeError, ValueError):
        pass
    from dateutil import parser

    try:
        parsed_day: datetime.datetime = parser.parse(found[1].strip(), fuzzy=True,
                                                     default=datetime.datetime(2000, 1, 1))
    except (ValueError, OverflowError):
        return None
    return parsed_day.date()


def _slashed_chat_day(text: str) -> datetime.date | None:
    """The day of a chat export's first slashed message time (``_SLASHED_STAMP``) on one of its first four lines."""
    first = _SLASHED_STAMP.search("\n".join(text.split("\n", 4)[:4]))
    if first is None:
        return None
    stamps = [m.groups() for m in _SLASHED_STAMP.finditer(text)]
    month_first = not any(int(a) > 12 for a, _, _, _ in stamps) and \
        any(int(b) > 12 or meridiem for _, b, _, meridiem in stamps)
    a, b, year = int(first[1]), int(first[2]), int(first[3])
    year = year if year >= 100 else year + (1900 if year >= 70 else 2000)
    day, month = (b, a) if month_first else (a, b)
    try:
        found = datetime.date(year, month, day)
    except ValueError:
        return None
    return found if _EARLIEST <= found.year <= datetime.date.today().year + 1 else None


def stated_date(text: str, document_head: bool = True) -> tuple[datetime.date, str] | None:
    """The date a passage gives itself in its words, as a document date and its precision ("year", "month", "day"): a
    chat export's first message time; else, opening a document, an e-mail's sending day; else the newest of a
    changelog's dated version headings; else a cue ("as of", "updated", "published", "approved", "in force from",
    "effective"...) followed by a date near its start or its end (``_STAMP_CHARS``), the first date it takes effect,
    else the first such; else, when ``text`` begins a document (``document_head``: not a later chunk of one, whose
    first lines may be a table's cells), a title saying from when it holds or a line of its first three that is a
    date alone (a day or a named month). None when it states none, or a date after next year (a number after a cue
    word that is no date: "updated 2500 records"), or before 1900 ("updated 1200 records"). For documents whose date
    is in their text only."""
    latest = datetime.date.today().year + 1
    if (chat := _CHAT_STAMP.match(text)) is not None and (day := iso_day(chat[1])) is not None:
        return day, "day"
    if (day := _slashed_chat_day(text)) is not None:
        return day, "day"
    if document_head and (sent := mail_date(text)) is not None and _EARLIEST <= sent.year <= latest:
        return sent, "day"
    headings = [d for d in (iso_day(m[1] or m[2]) for m in _HEADING_DATE.finditer(text))
                if d is not None and d.year <= latest]
    if headings:
        return max(headings), "day"
    edges = text if len(text) <= 2 * _STAMP_CHARS else f"{text[:_STAMP_CHARS]}\n{text[-_STAMP_CHARS:]}"
    head = "\n".join(_heading_words(text[:_STAMP_CHARS]).split("\n")[:_HEAD_LINES]) if document_head else ""
    cues = [*_EFFECTIVE.finditer(edges), *(m for m in _DATING.finditer(edges) if _dating(m, edges)),
            *(m for m in [*_TITLE_FROM.finditer(head), *_DATE_LINE.finditer(head)] if not (m["year"] or m["ym"]))]
    for match in cues:
        found = parsed(match)
        if found is not None and _EARLIEST <= found[0].year <= latest:
            return found
    return None


def release_date(sections: object, text: str) -> datetime.date | None:
    """The date of the release a changelog's chunk holds the notes of: the dated version heading among the headings
    it sits under (``sections``, its ``section`` metadata: "Changelog" / "3.0.0 - 2023-11-20" / "Changed"), else the
    one it opens with; None when neither is one. The file is dated by its newest release, but its chunk of 3.0.0's
    notes says what held from 3.0.0 on."""
    for heading in sections if isinstance(sections, list) else []:
        found = _RELEASE.search(heading) if isinstance(heading, str) else None
        if found is not None and (day := iso_day(found[1])) is not None:
            return day
    opening = _HEADING_DATE.match(text.lstrip())
    return iso_day(opening[1] or opening[2]) if opening is not None else None


_RELEASE = re.compile(r"^\W{0,2}v?\d+\.\d+(?:\.\d+)?\b[^\n]*?\b(\d{4}-\d{2}-\d{2})\b")
"""A heading naming a version and its date ("3.0.0 - 2023-11-20", "[3.1] (2023-02-01)")."""


def _dating(match: re.Match[str], text: str) -> bool:
    """Whether a cue's match dates the document: not a bare year after a comma ("published 3 reports, 2000 copies")
    nor the next meeting's date in minutes ("Next meeting, 21 January 2025")."""
    if match["year"] and "," in match[0]:
        return False
    return not re.search(r"\bnext\s*$", text[max(0, match.start() - 12):match.start()], re.IGNORECASE)


def _heading_words(head: str) -> str:
    """A document's head with Markdown's emphasis and heading marks taken out and blank lines dropped, so that
    "**New fares from 1 March 2024**" is read as the line it is."""
    lines = (re.sub(r"^#{1,6}\s+|\*\*?|__?", "", line).strip() for line in head.splitlines())
    return "\n".join(line for line in lines if line)


def iso_day(text: str) -> datetime.date | None:
    """The day an ISO 8601 date names ("2024-06-11"), or None when it names none ("2024-13-40")."""
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None


_NAME_DATE = re.compile(r"(?<![\w-])" + DATE, re.IGNORECASE)
_NAME_GAPS = re.compile(r"(?<!\d)[-_.\s]+|[-_.\s]+(?!\d)")
"""What separates the words of a file's name: read as spaces, but a date's own hyphens ("2024-03-11") stay."""


def name_date(file_name: str) -> tuple[datetime.date, str] | None:
    """The date a file's name gives it, and its precision: "minutes-2021-01-budget.txt" January 2021,
    "newsletter-sept-2024.html" September 2024, "visitor-leaflet-2021.md" 2021, "oakhurst-news-spring-2021.md"
    spring 2021 (its last month), "budget-2024-25.html" and "Q3-2024-report.md" 2024; the last date the name holds, None
    when it holds none. Why a name dates a file: people name files by when they wrote them, and
    the name stays when the words never say. A name's year may be the year a file is about ("festival-2020-review"),
    which is near when it was written; a question naming a year is not ordered by dates anyway."""
    stem = re.sub(r"(?<=\d)_(?=\d)", "-", file_name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0])
    latest = datetime.date.today().year + 1
    found = [parsed(m) or _year_of(m[0]) for m in _NAME_DATE.finditer(_NAME_GAPS.sub(" ", stem))]
    found = [day for day in found if day is not None and _EARLIEST <= day[0].year <= latest]
    if not found:  # a year among other numbers: "Q3-2024-report", "minutes-15-03-2024", "report_v2_2021"
        found = [(datetime.date(int(y), 1, 1), "year") for y in re.findall(r"(?<!\d)(?:19|20)\d{2}(?!\d)", stem)
                 if int(y) <= latest]
    return found[-1] if found else None


def _year_of(words: str) -> tuple[datetime.date, str] | None:
    """The year a name's words end on when they are no date as a whole: "leaflet 2021" (read as a month name and a
    year), "2024-25" (as a month 25)."""
    year = re.search(r"(?<!\d)((?:19|20)\d{2})(?:-\d{2})?$", words)
    return (datetime.date(int(year[1]), 1, 1), "year") if year else None


def date_fields(day: datetime.date, precision: str, source: str) -> dict[str, str]:
    """Metadata fields for a date read from a document's ``source`` ("text", "name"): ``date`` as precisely as it was
    given, and ``date_from``, so a reader (and the ``name-dates`` / ``text-dates`` ablations) can tell it from a date
    a person declared."""
    shown = {"year": f"{day:%Y}", "month": f"{day:%Y-%m}"}.get(precision, day.isoformat())
    return {"date": shown, "date_from": source}


def text_date_fields(text: str) -> dict[str, str]:
    """A document's metadata fields for the date its text states (``date`` as precisely as stated, and
    ``date_from: text``); empty when it states none."""
    found = stated_date(text)
    return date_fields(*found, "text") if found is not None else {}
