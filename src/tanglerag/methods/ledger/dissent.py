"""Which passages the vetted answer disagrees with, found without the model, and the report that names them.

After ``vetted`` has its answer, a passage on the question's topic that states a value of the answer's kind (a
duration for a duration, money for money) in a sentence about the question, and never the answer's value written any
way, disagrees with it. Only a disagreement a rule explains is reported, so a passage about another branch or another
person of one name (a different value, rightly) raises no conflict: the passage was left out or ranked below the one
answered from because it is older, a README beside release notes, corrected, or a declaration the ``trust`` setting
ignored; each such passage becomes a ``Set aside:`` line and a side of the report, with the rule's name and words.
Answers that are no value (a name, a place) raise no report: comparing those needs the claims ``ledger`` reads.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from tanglerag.conflicts import ConflictKind, ConflictReport, DocumentMeta, Side
from tanglerag.dating import iso_day
from tanglerag.methods.ledger.moment import as_of, names_a_year
from tanglerag.methods.ledger.policies import KIND_WHEN_DECIDED_BY
from tanglerag.methods.ledger.relevance import asked_names, content_stems, holds, name_stems
from tanglerag.methods.ledger.values import GLUED_UNIT, Value, counted_alike, read_value, spelled_as_digits
from tanglerag.methods.ledger.vetting import Vetting
from tanglerag.text import SET_ASIDE, filter_citations, normalize_answer, strip_citations
from tanglerag.types import RetrievedPassage

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_LABEL = re.compile(r"\b(?:section|sections|chapter|clause|article|part|version|no\.?|number|issue|vol\.?|"
                    r"volume|page|room|route|line)\s*$|[§#]\s*$", re.IGNORECASE)
"""Words before a number that make it a name, no amount: "Section 7.3", "Issue 3", "Route 12", "#4"."""
_STAMP = re.compile(r"^\W*\[?\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4},?\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]m)?\]?\s*-?|"
                    r"\[\d{1,2}:\d{2}(?::\d{2})?\]", re.IGNORECASE)
"""A chat message's timestamp ("[14/09/2024, 19:02] Ros:", "14/09/2024, 19:02 - Ros:", "[09:14] dana:"): when it
was written, not a time it states."""
_WRAPPED = re.compile(r"(?<![.!?;:\n])\n[ \t]*(?=[a-z])|(?<=[a-z])\n[ \t]*(?=\d)")
"""A line break inside a sentence of hard-wrapped text ("... given as 37%. The\ncorrect figure is 31%.", "said the
bridge is\n46 metres long"): read as a space, or the sentence's halves are read apart. A line that starts with a
number continues one that ends on a lower-case word only (a table's "Gross tonnage" label line stays a line)."""
_AMOUNT = re.compile(r"(?<!\w)(?:[$€£¥]|\b(?:EUR|USD|GBP|CHF|CAD|AUD)\s?)?\d[\d,.:]*(?:\s*(?:k|m|bn)\b|%)?"
                     r"(?:\s+(?![$€£¥]|(?:EUR|USD|GBP|CHF|CAD|AUD)\b)[^\s\d]+){0,2}", re.IGNORECASE)
"""A number with what may follow it (a currency before, a unit or counted thing after): the spans read as values.
Not a digit inside a word: "the T4 shines" names a model, no count of four. Not the next amount's currency sign
either, a sign or a code: "from £6.50 to £7.00" read "£7.00" as a count of 7 (f-yarrowfield-ferry-2)."""
_CHANGED = (r"(?:raised|lowered|increased|decreased|reduced|cut|shortened|lengthened|extended|changed|moved|went|"
            r"rose|fell|dropped|grew|jumped|climbed|rises|falls|drops|grows|increases|decreases|changes|"
            r"(?:raising|lowering|increasing|decreasing|reducing|cutting|extending|changing)"
            r"(?=\s+(?:the|its|our|their|this|that|it|them|a|an)\b))")
"""Past, present and "-ing" before its object: "the car toll rises from £6.50 to £7.00" names £6.50 as the former
value (f-yarrowfield-ferry-2), "reducing the maximum ... from six to five" six (h-fenmoor-quiz-league-1); "changing
rooms are open from 9:00 to 17:00" names no change.
Not "go", "run" or "climb" in the present: "buses go from 06:00 to 23:00" and "the path climbs from 120 m to 480 m"
state ranges, not changes."""
_FORMER = re.compile(r"(?:\((?:was|previously|formerly)|\b(?:previously|formerly|instead of|rather than|replacing|replaces|"
                     r"no longer|not|(?:up|down) from|" + _CHANGED + r" from|(?:given|reported|stated|printed|listed|"
                     r"shown|published|quoted) (?:as|at)))\s*:?\s*$", re.IGNORECASE)
"""Words before a value that make it the one a change or a correction left behind: "100 MB (was 25 MB)", "up from
£355", "shortened from 15 minutes", "the number of participants was given as 412", "EUR 2, not EUR 3". A plain
"was" is no change ("the fee was £30 in 2020" states 2020's fee), nor is a range's "from 9:00 to 17:00"."""
_CHANGE = re.compile(r"\b" + _CHANGED + r"\b", re.IGNORECASE)
_FROM_TO = re.compile(r"\bfrom\s*$", re.IGNORECASE)
_TO = re.compile(r"^\S+(?:\s+[^\s\d]+)?\s+to\b", re.IGNORECASE)
"""A value, perhaps its unit, then "to": the first value of "went from 25 MB to 100 MB"."""


def former(sentence: str, start: int) -> bool:
    """Whether the value at ``sentence[start:]`` is what held before a change the sentence states ("(was 25 MB)",
    "shortened from 15 minutes to 3 minutes", "went from 25 MB to 100 MB"): a passage saying so states the new value,
    not the old. A range ("open from 9:00 to 17:00") names no change: both ends stand."""
    before = sentence[:start]
    return bool(_FORMER.search(before) or (_FROM_TO.search(before) and _CHANGE.search(before)
                                           and _TO.search(sentence[start:])))


def split_sentences(text: str) -> list[str]:
    """``text``'s sentences and lines, hard-wrapped lines joined (``_WRAPPED``), the empty ones dropped."""
    return [s for s in _SENTENCE.split(_WRAPPED.sub(" ", text)) if s.strip()]


def stated_values(text: str, question: str, skip_former: bool = True, title: str = "") -> list[tuple[Value, str]]:
    """Each value a sentence of ``text`` about the question states as holding, with the words it was read from; a
    value a change left behind (``former``; the rule ``former-values``) is not stated. The values of the sentences
    sharing the question's rarer words come first, the names it asks about counting half (they say which thing, the
    others what of it): "Gross tonnage: 2,140" before "MARISOL BRAE (IMO 9412876)" (``_about``). Of values in sentences
    as much about the question, one right after the question's words comes first: asked when the branch closes,
    "opens at 10:00 and closes at 17:00" states 17:00 first."""
    sentences = split_sentences(text)
    shares = _about(sentences, question, title)
    named = name_stems(question)
    seen = Counter(stem for stems in shares for stem in stems)
    wanted = content_stems(question)
    out = [(sum((0.5 if s in named else 1) / seen[s] for s in stems), bool(wanted & content_stems(cue)), value, span)
           for sentence, stems in zip(sentences, shares, strict=True)
           if stems for value, span, cue, holds in _read_sentence(sentence) if holds or not skip_former]
    return [(value, span) for _, _, value, span in sorted(out, key=lambda t: (-t[0], not t[1]))]


def _about(sentences: list[str], question: str, title: str) -> list[set[str]]:
    """The question's content words each sentence is about, empty for one not about the question (sharing under a
    third of them). Its own words count, and with them its passage's ``title`` (a list entry titled "Old Corn
    Exchange, Pellbridge" is about it in "Built 1847 to designs by ..."), the short line without a number before it
    (a table's "Gross tonnage" cell, then "1,240"), or, sharing none itself, the prose sentence before it ("... was
    given as 37%. The correct figure is 31%."; a table's next line is no continuation)."""
    wanted = content_stems(question)
    needed = max(1, len(wanted) // 3)
    titled = wanted & content_stems(title)
    out: list[set[str]] = []
    for n, sentence in enumerate(sentences):
        before = sentences[n - 1] if n else ""
        label = before if is_label(before) else ""
        own = wanted & content_stems(f"{label} {sentence}") or (out[-1] if re.search(r"[.!?;]\s*$", before) else set())
        out.append(own if own and len(own | titled) >= needed else set())
    return out


def key_sentences(text: str, question: str, title: str, keep: int) -> str:
    """The ``keep`` sentences of ``text`` most about the question (sharing its rarer words: ``_about``), in their
    order, each with the short label line it leans on (a table's "Saturday" above "09:30 - 17:00"), joined with " ...
    "; the first sentence when none is about the question. What ``ledger.vetted_evidence=sentences`` shows the model
    of a passage instead of its words."""
    sentences = [s.strip() for s in split_sentences(text)]
    if not sentences:
        return text
    shares = _about(sentences, question, title)
    seen = Counter(stem for stems in shares for stem in stems)
    ranked = sorted(((sum(1 / seen[s] for s in stems), -n) for n, stems in enumerate(shares) if stems), reverse=True)
    chosen = {-n for _, n in ranked[:keep]} or {0}
    labelled = chosen | {n - 1 for n in chosen if n and is_label(sentences[n - 1])}
    return " ... ".join(sentences[n] for n in sorted(labelled))


def is_label(line: str) -> bool:
    """A short line without a number or a sentence's end: a table cell or heading the next line's value is under."""
    return len(line.split()) <= 6 and not re.search(r"\d|[.!?;]\s*$", line)


def sentence_values(sentence: str, skip_former: bool) -> list[tuple[Value, str]]:
    """Each value in one sentence, in its order: the longest span that reads as more than a count ("30 minutes",
    not "30"; "1 April", not "1 April to"'s count of Aprils), else the longest, cut to the words that say it; an ISO
    date as one date; a number written in words as its digits (rule ``spelled-numbers``)."""
    return [(value, span) for value, span, _, holds in _read_sentence(sentence) if holds or not skip_former]


def _read_sentence(sentence: str) -> list[tuple[Value, str, str, bool]]:
    """Every value of ``sentence_values``, each with the words just before it (its cue: "closes at") and whether the
    sentence states it as holding (not ``former``)."""
    found = [(m.start(), Value("date", float(day.toordinal()), "day"), m[0], True) for m in _ISO_DATE.finditer(sentence)
             if (day := iso_day(m[0])) is not None]
    written = sentence
    sentence = GLUED_UNIT.sub(" ", _ISO_DATE.sub(lambda m: " " * len(m[0]), _STAMP.sub(" ", sentence)))
    sentence = spelled_as_digits(sentence)  # "two approving reviews" is a count, as "2 approving reviews" is
    for match in _AMOUNT.finditer(sentence):
        if _LABEL.search(sentence[:match.start()]):
            continue
        words = match[0].split()
        spans = [" ".join(words[:n]).rstrip(".,;:)*_-\u2013") for n in range(len(words), 0, -1)]
        read = [(value, span) for span in spans if (value := read_value(span)) is not None]
        if read:
            best = next((v for v, _ in read if v.kind != "count"), read[0][0])
            found.append((match.start(), *next((v, span) for v, span in reversed(read) if v == best),
                          not former(sentence, match.start())))
    return [(value, as_written(span, written), " ".join(sentence[:start].split()[-_CUE_WORDS:]), holds)
            for start, value, span, holds in sorted(found, key=lambda f: f[0])]


def as_written(span: str, written: str) -> str:
    """A value's words as the sentence wrote them: "£1.08m", not the "£1.08 m" it was read as (``GLUED_UNIT``), so
    an answer written from them reads as its document does."""
    glued = re.sub(r"(?<=\d) (?=[a-zA-Z\u00b0\u00b5])", "", span)
    return glued if glued != span and glued in written and span not in written else span


_CUE_WORDS = 2
"""How many words before a value say what it is ("closes at 17:00"): more would take in the sentence's subject, which
every value of the sentence shares ("the branch opens at 10:00 and closes at 17:00")."""


_ISO_DATE = re.compile(r"(?<![\w.-])\d{4}-\d{2}-\d{2}(?![\w-])")
"""A day written as ISO 8601 ("## 2.1.0 - 2024-06-11"): one date, not the counts 2024, 06 and 11."""


def names(text: str, value: Value) -> bool:
    """Whether ``text`` names ``value`` anywhere, as holding or as a value a correction replaces: an erratum corrects
    the pages stating the figure it names ("was given as 412"), not a second study's figure it never mentions."""
    return any(v.same(value) for v, _ in sentence_values(_WRAPPED.sub(" ", text), skip_former=False))


_BARE = re.compile(r"(\d[\d,.]*)(\s*(?:\[[\d, ]+\]\s*)*)")


def with_stated_unit(answer: str, cited: list[str], passages: list[RetrievedPassage], question: str) -> str:
    """A bare number ("3 [3, 4]") given the words its cited passages state it with in a sentence about the
    question ("3 days [3, 4]", "€50 [1]"): the 1.5B model drops the unit a person needs to read the number, as
    ``sides.with_unit`` mends for the ledger. A year, or a number no cited passage states with a unit or as a count
    of things ("6 zones"; not "412 local" of "412 local people", nor "8:00" of "from 8:00 to 18:00": a time of day
    or a date is another value, not the number's unit), is left."""
    first, _, rest = answer.partition("\n")
    bare = _BARE.fullmatch(first.strip())
    if bare is None or (value := read_value(bare[1])) is None or value.kind != "count":
        return answer
    texts = {h.passage.id: h.passage for h in passages}
    number = re.compile(rf"\D{{0,4}}{re.escape(bare[1])}(?![\d:]|[.,]\d)")
    for pid in (c for c in cited if c in texts):
        for stated, span in stated_values(texts[pid].text, question, title=texts[pid].title):
            counted = stated.kind != "count" or re.search(r"[a-z]s$", span)
            if stated.kind in ("quantity", "money", "count") and counted and number.match(span):
                return f"{span}{bare[2]}" + (f"\n{rest}" if rest else "")
    return answer


_EARLIER = re.compile(r"\ban? (?:earlier|previous|original) version of this (?:article|story|page|post|report)\b"
                      r"[^.]{0,40}?\b(?:said|stated|gave|reported|listed|misstated)\b", re.IGNORECASE)
"""A correction note inside the document it corrects: "An earlier version of this article said the bridge is 46
metres long. It is 64 metres long." (e-dunmere-footbridge-1)."""


def corrected_in_text(text: str) -> list[tuple[Value, str]]:
    """The values a document's own correction note says were wrong, each with the words of the value it gives
    instead (the next sentence's of the same dimension)."""
    sentences = split_sentences(text)
    out = []
    for n, sentence in enumerate(sentences):
        if _EARLIER.search(sentence) and n + 1 < len(sentences):
            instead = sentence_values(sentences[n + 1], skip_former=True)
            for wrong, _ in sentence_values(sentence, skip_former=False):
                out += [(wrong, span) for value, span in instead[:1] if value.dimension == wrong.dimension
                        and not value.same(wrong)]
    return out


def restated(answer: str, cited: list[str], passages: list[RetrievedPassage], question: str,
             off: frozenset[str] = frozenset()) -> tuple[str, str]:
    """The answer with its value written again where a rule says the model misread it, with the rule's words for the
    trace (else the answer and ""): a value a cited passage's own correction note says was wrong, as the note's
    (``in-text-correction``); a value its cited passages name only as what a change replaced, as the value they give
    in its place (``replaced-value``; not for a question asking about a moment, ``asks_a_moment``, which a caller
    passing the question without its "as of" clause says by turning the rule off); a value no passage shown states anywhere, as the value its cited passages all state of
    its kind in their sentence most about the question (``unstated-value``: "1947 [2]" over "Built 1847 to designs
    by ...", the 1.5B model misreading a digit). Only an answer that is its value alone is rewritten: a sentence
    around it may say more."""
    first, newline, rest = answer.partition("\n")
    said, text = answer_value(first), strip_citations(first).strip()
    if said is None or read_value(text) is None:
        return answer, ""
    hits = [h for h in passages if h.passage.id in cited]
    fixed = (None if "in-text-correction" in off else _corrected(said, text, hits)) or \
        (None if "replaced-value" in off or asks_a_moment(question, "month-moment" not in off)
         else _replaced(said, text, hits)) or \
        (None if "unstated-value" in off else _unstated(said, text, hits, passages, question))
    if fixed is None:
        return answer, ""
    return first.replace(text, fixed[0], 1) + newline + rest, fixed[1]


def _corrected(said: Value, text: str, hits: list[RetrievedPassage]) -> tuple[str, str] | None:
    """The value a cited passage's own correction note gives instead of ``said``, with the rule's words."""
    for hit in hits:
        for wrong, span in corrected_in_text(hit.passage.text):
            if wrong.same(said):
                return span, f"in-text-correction: {hit.passage.title or hit.passage.id} corrects {text} to {span}"
    return None


def _replaced(said: Value, text: str, hits: list[RetrievedPassage]) -> tuple[str, str] | None:
    """The value the cited passages ``hits`` all give in place of ``said`` where they name ``said`` only as what a
    change left behind ("will close at 16:00 on Saturdays instead of 17:00" read as 17:00), with the rule's words."""
    instead = [found for h in hits if (found := in_place_of(said, f"{h.passage.title}\n{h.passage.text}"))]
    if not hits or len(instead) < len(hits) or any(not value.same(instead[0][0]) for value, _ in instead):
        return None
    span = instead[0][1]
    return span, f"replaced-value: the cited passages name {text} only as what {span} replaced"


def asks_a_moment(question: str, closing: bool = True) -> bool:
    """Whether the question names a year or an "as of" date: then a value a change replaced may be the one asked
    for ("revenue rose from 412 million euros in 2019 to 530 million euros in 2021", asked for 2019's), and
    ``replaced-value`` leaves it to the date rules."""
    return names_a_year(question, closing) or as_of(question, closing) is not None


def in_place_of(said: Value, text: str) -> tuple[Value, str] | None:
    """The value of ``said``'s dimension a sentence of ``text`` states as holding in place of ``said``, where it
    names ``said`` as a former value: the nearest one before it ("closes at 16:00 instead of 17:00", even after
    "opens at 9:00"), else the first after it ("raised from 30 s to 45 s"); None when ``text`` also states ``said`` as
    holding, or never names it as a former one."""
    read = [_read_sentence(sentence) for sentence in split_sentences(text)]
    if any(holds and v.same(said) for values in read for v, _, _, holds in values):
        return None
    for values in read:
        former_at = next((n for n, (v, _, _, holds) in enumerate(values) if not holds and v.same(said)), None)
        if former_at is None:
            continue
        kind = [(n, v, span) for n, (v, span, _, holds) in enumerate(values) if holds and v.dimension == said.dimension]
        before = [(v, span) for n, v, span in kind if n < former_at]
        after = [(v, span) for n, v, span in kind if n > former_at]
        if before or after:
            return before[-1] if before else after[0]
    return None


def _unstated(said: Value, text: str, hits: list[RetrievedPassage], passages: list[RetrievedPassage],
              question: str) -> tuple[str, str] | None:
    """The value the cited passages ``hits`` all state of the answer's kind when no passage states ``said``, with
    the rule's words. A value some passage states is left (the model cites a changelog's first chunk for the Python
    version its second states, b-pondlog-cli-1), and so is one the passages' reader cannot read in a sentence (a
    month before its year: "September 2024" would become "2024")."""
    if not hits or not names(text, said) or any(names(f"{h.passage.title}\n{h.passage.text}", said)
                                                for h in passages):
        return None
    tops = [found[0] for h in hits if (found := _of_kind(said, h, question, True))]
    if not tops or any(not value.same(tops[0][0]) for value, _ in tops):
        return None
    return tops[0][1], f"unstated-value: no passage states {text}; the cited ones state {tops[0][1]}"


def later_subject(answer: str, cited: list[str], passages: list[RetrievedPassage], question: str) -> str:
    """The rule's words when the answer's value is another thing's: each cited passage stating it names a name the
    question asks about ("Tom and Aisha", "Hearthguard Gold") only after the sentences stating the value, with none
    of the name's words before them ("Guerin Prep was founded in 1962" speaks of Guerin High School) nor in its
    title or section. A passage names its subject before it states what holds of it: "Maya: 2:30pm at the chapel!",
    then "Tom and Aisha ... no times yet". "" when one cited passage does not, or none can be read so."""
    said = answer_value(answer.split("\n", 1)[0])
    if said is None:
        return ""
    asked = [name for name in asked_names(question) if not all(word.isdigit() for word in name)]
    later = []
    for hit in (h for h in passages if h.passage.id in cited):
        sentences = split_sentences(hit.passage.text)
        stating = [n for n, s in enumerate(sentences) if names(s, said)]
        if not stating:
            continue
        before = set(normalize_answer(" ".join([hit.passage.title, str(hit.passage.metadata.get("section", "")),
                                                *sentences[:max(stating) + 1]])).split())
        after = set(normalize_answer(" ".join(sentences[max(stating) + 1:])).split())
        found = [" ".join(sorted(name)) for name in asked if holds(after, name) and not any(holds(before, {w}) for w in name)]
        if not found:
            return ""
        later.append(f"{hit.passage.title or hit.passage.id} names {', '.join(found)} only after it states it")
    return f"later-subject: {'; '.join(later)}: the value is another thing's" if later else ""


def answer_value(answer: str) -> Value | None:
    """The value an answer line names, its citation marks aside, or its first clause's ("4 weeks at full pay, to be
    taken within the first six months": 4 weeks); None for a name, a place or a sentence."""
    text = strip_citations(answer)
    return read_value(text) or read_value(re.split(r"[,;(]|\s[-\u2013\u2014]\s", text, maxsplit=1)[0])


def _of_kind(said: Value, passage: RetrievedPassage, question: str, skip_former: bool) -> list[tuple[Value, str]]:
    """The values ``passage`` states of the answer's kind: its dimension, and for a count the same thing counted
    when both name one (nights are not guests)."""
    return [(v, span) for v, span in stated_values(passage.passage.text, question, skip_former, passage.passage.title)
            if v.dimension == said.dimension and (v.kind != "count" or counted_alike(v.unit, said.unit))]


def dissenting(said: Value, passage: RetrievedPassage, question: str, skip_former: bool = True) -> str | None:
    """The words of the value ``passage`` states against the answer's value ``said`` (the first of its kind), or
    None when it states the answer's value or none of its kind."""
    found = _against(said, passage, question, skip_former)
    return found[1] if found is not None else None


def _against(said: Value, passage: RetrievedPassage, question: str, skip_former: bool) -> tuple[Value, str] | None:
    """``dissenting``'s value with its words."""
    of_kind = _of_kind(said, passage, question, skip_former)
    if not of_kind or any(v.same(said) for v, _ in of_kind):
        return None
    return of_kind[0]


def stating(said: Value, passage: RetrievedPassage, question: str, skip_former: bool = True) -> bool:
    """Whether ``passage`` states the answer's value ``said`` in a sentence about the question."""
    return any(v.same(said) for v, _ in _of_kind(said, passage, question, skip_former))


RULE_KINDS: dict[str, ConflictKind | None] = {**KIND_WHEN_DECIDED_BY, "drafts": None, "as-of": "outdated",
                                              "trust": "misinformation", "informal": "misinformation",
                                              "informal-older": "outdated", "named-former": "outdated"}
"""The report a rule's verdict makes, as the ledger's policies make it; a draft's value is no conflict (it was never
in force), a value dated after the asked moment is outdated then, a refused declaration is misinformation, and so is
a post's value against the page of the body it speaks of (as the ledger's ``authority`` reports it), unless the post
is older than that page: then its value is the one the page has since changed (``informal-older``, vetted's own:
outdated, f-yarrowfield-ferry-1); so is a value the cited document names as the one a change replaced
(``named-former``: "Tuesday track is at 7pm now (not 6:30)" against the club's old page, f-millbeck-runners-1)."""


def explained(pid: str, cited: list[str], vetting: Vetting, metas: dict[str, DocumentMeta],
              kinds: Mapping[str, str], value: Value | None = None) -> tuple[ConflictKind, str] | None:
    """Why a disagreeing passage loses to the cited ones, as (report kind, rule and words), or None when no rule
    says (two branches, two products, two people: different things, not a conflict)."""
    rule = vetting.left_out.get(pid) or losing_rule(pid, cited, vetting, metas, kinds, value)
    kind = RULE_KINDS.get(rule.split(":", 1)[0]) if rule else None
    return (kind, rule) if kind is not None and rule is not None else None


def losing_rule(pid: str, cited: list[str], vetting: Vetting, metas: dict[str, DocumentMeta],
                kinds: Mapping[str, str], value: Value | None = None) -> str | None:
    """The rule by which ``pid``'s document loses to the ``cited`` ones ("rule: why"), if one does (and is not
    turned off)."""
    rule = _losing_rule(pid, cited, vetting, metas, kinds, value)
    return rule if rule is not None and rule.split(":", 1)[0] not in vetting.off else None


def _losing_rule(pid: str, cited: list[str], vetting: Vetting, metas: dict[str, DocumentMeta],
                 kinds: Mapping[str, str], value: Value | None) -> str | None:
    if pid in vetting.unverified and not any(c in vetting.unverified for c in cited):
        return "trust: its declarations were ignored (outside the trusted paths)"
    kind = kinds.get(pid)
    cited_kinds = {kinds.get(c) for c in cited}
    if kind == "readme" and "changelog" in cited_kinds:
        return "releases: a README beside release notes that change it"
    if kind == "informal" and any(kinds.get(c) != "informal" for c in cited):
        posted = metas[pid].date
        pages = [d for c in cited if kinds.get(c) != "informal" and (d := metas[c].date) is not None]
        if not {"informal", "informal-older"} & vetting.off and posted is not None and pages and posted < max(pages):
            return (f"informal-older: a blog, forum or chat post of {posted.isoformat()}, before the page "
                    f"of {max(pages).isoformat()} that says otherwise")
        return "informal: a blog, forum or chat post, where a page that is not one says otherwise"
    date = metas[pid].date
    for winner, rule in (("correction", "corrections: what a correction corrects"),
                         ("register", "register: a page repeating another value than the official register")):
        stating = [metas[c].date for c in cited if kinds.get(c) == winner
                   and (winner != "correction" or value is None or names(vetting.texts.get(c, ""), value))]
        if kind != winner and stating and (date is None or None in stating or date <= max(d for d in stating if d)):
            return rule  # as the ledger's policy: a 2020 erratum does not correct a 2024 handbook
    if not vetting.by_date:  # a question about 2020: a 2024 page's value is no newer value of the 2020 one
        return None
    if value is not None and "named-former" not in vetting.off and named_former(value, cited, vetting) and \
            not names_as_former(value, vetting.texts.get(pid, "")):
        return "named-former: a cited document names this value as the one a change replaced"
    newest = max((d for c in cited if (d := metas[c].date) is not None
                  and (vetting.now or vetting.related(pid, c)
                       or (pid in vetting.titled and c in vetting.named))), default=None)
    if date is not None and newest is not None and date < newest:
        return f"newest: dated {date.isoformat()}, before {newest.isoformat()}"
    return None  # an undated document does not lose to a dated one: on the tune half an official specification page
    # without a date lost to a dated blog that way (b-orrin-thermostat-1), and reports came on agreeing asks


def names_as_former(value: Value, text: str) -> bool:
    """Whether ``text`` names ``value`` as what a change left behind anywhere: minutes reducing a team "from six to
    five" know of the change, whatever else they say of six (h-fenmoor-quiz-league-1)."""
    return any(not holds and v.same(value) for sentence in split_sentences(text)
               for v, _, _, holds in _read_sentence(sentence))


def named_former(value: Value, cited: list[str], vetting: Vetting) -> bool:
    """Whether a ``cited`` passage names ``value`` only as what a change or a correction left behind ("at 7pm now
    (not 6:30)", "10:40pm instead of 11:10pm"), with a value of its dimension in its place: a page still stating that
    value states the old one, whatever its date (an undated club page, f-millbeck-runners-1)."""
    twins = [value, *half_day(value)]
    return any(in_place_of(twin, text) is not None for pid in cited if (text := vetting.texts.get(pid, ""))
               for twin in twins)


def half_day(value: Value) -> list[Value]:
    """An afternoon time of day as a note written without "pm" gives it ("not 6:30" for 6:30pm), or nothing: only
    where a document names a former value, since in a 24-hour table "10:00" beside "13:00" is the morning's."""
    return [Value("clock", value.magnitude - 720, "")] if value.kind == "clock" and value.magnitude >= 780 else []


_ITEMS = re.compile(r",\s*(?:and\s+)?|;\s*|\s+and\s+")
"""Where a list answer's items part ("Tallinn, Leeds and Porto")."""


def complementary(answer: str, cited: list[str], passages: list[RetrievedPassage],
                  vetting: Vetting) -> ConflictReport | None:
    """A list answer whose items are stated by different cited documents ("Tallinn, Leeds, Porto [1, 2, 4]": one
    office a page) as a complementary report, a side for each item with the passages stating it; None for one item,
    one document, or an item no cited passage states (then it is no list of parts read from them)."""
    items = [i.strip(" .") for i in _ITEMS.split(strip_citations(answer.split("\n", 1)[0])) if i.strip(" .")]
    if len(items) < 2 or len(cited) < 2:
        return None
    texts = {h.passage.id: f" {normalize_answer(h.passage.text)} " for h in passages if h.passage.id in cited}
    sides = []
    for item in items:
        words = normalize_answer(item)
        holding = [pid for pid in cited if words and pid in texts and f" {words} " in texts[pid]]
        if not holding:
            return None
        sides.append(Side(answer=item, passages=holding, witnesses=len(holding), verdict="kept"))
    if len({vetting.document(pid) for side in sides for pid in side.passages}) < 2:  # whichever is cited first
        return None
    return ConflictReport(kind="complementary", sides=sides,
                          rule="complementary: the answer's parts are stated by different documents")


def _former(vetting: Vetting) -> bool:
    return "former-values" not in vetting.off


def overruled(answer: str, cited: list[str], shown: list[RetrievedPassage], question: str, vetting: Vetting,
              metas: dict[str, DocumentMeta], kinds: Mapping[str, str]) -> dict[str, str]:
    """The passages behind the answer (those it cites, and those stating its value: the 1.5B model cites an
    official page for the value it read in a forum post below it) that a rule ranks below an uncited one on topic
    stating another value of the answer's kind, each with the rule: the model answered from a passage the rules
    would not have it believe (an older page's value over a newer one's, a README's over the release notes'), so it
    is asked again without them, once: the second answer stands."""
    out: dict[str, str] = {}
    said = answer_value(answer)
    if said is None:
        return out
    behind = list(dict.fromkeys([*cited, *(h.passage.id for h in shown if h.passage.id in vetting.relevant
                                           and stating(said, h, question, _former(vetting)))]))
    for hit in shown:
        rival = hit.passage.id
        if rival not in vetting.relevant or dissenting(said, hit, question, _former(vetting)) is None:
            continue
        for pid in behind:
            if pid not in out and pid != rival and \
                    (rule := losing_rule(pid, [rival], vetting, metas, kinds, said)) is not None:
                out[pid] = rule
    return out


def dissent(answer: str, cited: list[str], passages: list[RetrievedPassage], question: str, vetting: Vetting,
            metas: dict[str, DocumentMeta], kinds: Mapping[str, str]) -> tuple[str, list[ConflictReport], list[str]]:
    """The answer, the reports of the passages on topic that disagree with it for a reason a rule gives, and their
    ``Set aside:`` lines (numbered as ``passages``, the order the answer's marks refer to). A cited passage stating
    another value is one of them (the 1.5B model cites the 2021 rule beside the 2023 amendment it answers from),
    its mark taken off the answer."""
    said = answer_value(answer)
    if not cited:
        return answer, [], []
    if said is None:  # a name, a place, or a list: no value to dispute, perhaps parts from several documents
        parts = None if "complementary" in vetting.off else complementary(answer, cited, passages, vetting)
        return answer, ([parts] if parts is not None else []), []
    position = {h.passage.id: i for i, h in enumerate(passages, 1)}
    against = {h.passage.id: found for h in passages if h.passage.id in vetting.relevant
               and (found := _against(said, h, question, _former(vetting))) is not None}
    backing = [c for c in cited if c not in against] or cited
    documents = {vetting.document(pid) for pid in backing}  # a document's chunks are one witness
    kept = Side(answer=strip_citations(answer), passages=backing, witnesses=len(documents))
    reports, lines = [], []
    for pid, (value, words) in against.items():
        why = None if pid in backing else explained(pid, backing, vetting, metas, kinds, value)
        if why is None:
            continue
        kind, rule = why
        side = Side(answer=words, passages=[pid], witnesses=1, verdict="rejected", note=rule.split(": ", 1)[1])
        reports.append(ConflictReport(kind=kind, sides=[kept, side], rule=rule))
        lines.append(f"{SET_ASIDE} {words}: {side.note} [{position[pid]}]")
    dropped = {position[pid] for pid in cited if pid not in backing and any(pid in r.sides[1].passages for r in reports)}
    first, newline, rest = answer.partition("\n")  # the cited passages set aside lose their marks in the answer
    return filter_citations(first, lambda n: n not in dropped).rstrip() + newline + rest, reports, lines
