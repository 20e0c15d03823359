"""Issue 60, item 4: freshness v2, questions the project never tuned on, answered from one shared corpus.

Run it (MiniLM, the default embedder; the hashing embedder would not measure retrieval):
  .venv/bin/python benchmarks/freshness_v2.py build          # writes the three benchmarks/data/freshness_v2_* files
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag index benchmarks/data/freshness_v2_corpus_meta.jsonl \
      --out runs/freshness_v2/index-meta
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag index benchmarks/data/freshness_v2_corpus_text.jsonl \
      --out runs/freshness_v2/index-text
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset benchmarks/data/freshness_v2_dev.jsonl \
      --index runs/freshness_v2/index-meta --methods ledger,concat \
      --metrics as_of_correct,ramdocs_strict,answer_recall,misinfo_leak,unk,cited,conflict_recall,false_conflict_rate \
      --out runs/conflicts/freshness-v2-meta --json
  HF_HUB_OFFLINE=1 .venv/bin/tanglerag eval --dataset benchmarks/data/freshness_v2_dev.jsonl \
      --index runs/freshness_v2/index-text --methods ledger,concat \
      --metrics as_of_correct,ramdocs_strict,answer_recall,misinfo_leak,unk,cited,conflict_recall,false_conflict_rate \
      --out runs/conflicts/freshness-v2-text --json
  .venv/bin/python benchmarks/freshness_v2.py baseline       # the no-model rule on both indexes, both halves
The rows carry no passages, so `eval` retrieves each question from the index given by `--index` (the default
`--scope own` falls back to it for a question without passages of its own; `--scope pooled` would instead pool the
questions' own passages, which these rows do not have), top-k the default (`retrieval.top_k`, 5), dense.

Source and license: questions, dates and answers come from SituatedQA (Zhang & Choi, EMNLP 2021),
mikejqzhang/SituatedQA @ 1ef85451 : data/qa_data/temp.dev.jsonl (an unchanged copy in ../shared/data/situatedqa/);
its repository states no license and its questions come from Natural Questions (CC BY-SA 3.0): keep this
attribution with any copy. The passages are not SituatedQA's and not real text; this script writes them.

Why a v2: every v1 passage (benchmarks/freshness_set.py) quotes its question, and each question came with its own
passages and one distractor, so "take the passages that repeat the question, then the newest dated on or before the
moment" solved v1 without a model, and the project's date rules were chosen on v1's rows. Here:
- Questions: SituatedQA-temp dev ids that v1's file (benchmarks/data/freshness_dev.jsonl) does not use, their
  timelines, gold and as-of rows made by v1's own logic (imported: `timelines`, `row`, `pair`), one plain and one
  as-of row per question, 60 questions drawn by the seed (120 rows). A question whose words and answers overlap a
  drawn one's (SituatedQA asks "most NBA points in a game" three ways, with different dates) is skipped, so no
  passage of one question silently answers another with another date.
- Passages state the answer and what it is about, in the question's words but not as a question: the question is
  turned into a statement by rules over its words and spaCy's part-of-speech tags (no model that writes text):
  "when did england last get to the semi final of a world cup" -> "england last got to the semi final of a world
  cup in 2018"; "who is the governor of the virgin islands" -> "Albert Bryan is the governor of the virgin islands"
  or "the governor of the virgin islands is Albert Bryan". A question no rule turns into a statement is not drawn.
  Each answer is worded by a made-up source, each with three templates chosen by a seeded RNG.
- One corpus holds every drawn question's passages (one per timeline entry), so the other questions' passages are
  the distractors retrieval brings. Two variants of the same passages (same ids): `_meta` has the date only in
  metadata (`date`, `source`), `_text` has it only in the text ("As of June 12, 2018, ...", "updated in 2019")
  and `source` alone in metadata.
- Rows: the v1 format without passages (`answers`, `aliases`, `wrong_answers`, `as_of` on as-of rows, `rule`,
  `newest_answer`, `situatedqa_id`) and a `timeline` whose entries name their passage's id; ids `freshness2-...`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from freshness_set import Timeline, pair, row, timelines

from tanglerag.stages.entities import SPACY_MODEL
from tanglerag.text import normalize_answer

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks/data"
SITUATEDQA = ROOT.parent / "shared/data/situatedqa/temp.dev.jsonl"
V1 = DATA / "freshness_dev.jsonl"

# Each source words a statement one of three ways; each way has a dateless form (the `_meta` corpus) and a dated
# one (the `_text` corpus). {S}/{s}: the statement capitalised or not; {date}: "June 12, 2018" or "2018";
# {when}: "on June 12, 2018" or "in 2018". Every dated form puts the date right after a cue word (DATE_CUE).
SOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "City Ledger": (("{S}.", "As of {date}, {s}."),
                    ("Reported: {s}.", "Reported and checked {when}: {s}."),
                    ("{S}, the desk notes.", "{S}, the desk notes (updated {when}).")),
    "Almanac Online": (("Almanac entry: {s}.", "Almanac entry, revised {when}: {s}."),
                       ("Per the almanac, {s}.", "Per the almanac as of {date}, {s}."),
                       ("{S} (almanac record).", "{S} (almanac record dated {date}).")),
    "Fan Wiki": (("Fans keep track: {s}.", "Fans keep track, updated {when}: {s}."),
                 ("{S}, according to the fan wiki.", "{S}, according to the fan wiki as of {date}."),
                 ("Wiki note: {s}.", "Wiki note, revised {when}: {s}.")),
    "Morning Wire": (("Wire report: {s}.", "Wire report published {when}: {s}."),
                     ("{S}, the wire reports.", "{S}, the wire reports (published {when})."),
                     ("In brief: {s}.", "In brief, as of {date}: {s}.")),
    "Reference Desk": (("Reference card: {s}.", "Reference card dated {date}: {s}."),
                       ("Checked by the reference desk: {s}.", "Checked {when} by the reference desk: {s}."),
                       ("{S}, says the reference desk.", "{S}, says the reference desk as of {date}.")),
    "Stats Corner": (("Stats corner: {s}.", "Stats corner, updated {when}: {s}."),
                     ("{S}, the figures show.", "{S}, the figures show as of {date}."),
                     ("For the record, {s}.", "For the record (published {when}), {s}.")),
}
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
DATE = rf"(?:(?:{MONTHS}) \d{{1,2}}, \d{{4}}|\d{{4}})"
DATE_CUE = re.compile(rf"\b(?:as of|updated|revised|published|dated|checked)\s+(?:on\s+|in\s+)?({DATE})",
                      re.IGNORECASE)
"""How the no-model rule reads a `_text` passage's date: the one the cue words introduce, not a date the answer
states (an answer may be a date itself)."""
FULL_DATE = re.compile(rf"^(?:(?:{MONTHS}) \d{{1,2}}, \d{{4}}|\d{{1,2}} (?:{MONTHS}) \d{{4}})$", re.IGNORECASE)
FUNCTION_WORDS = ("a an the of in on at to for by with and or is are was were be been has have had do does did will what "
                  "who whom whose when where which how many much there this that its it as 's")
STOP = frozenset(FUNCTION_WORDS.split())
NOW_WORDS = re.compile(r"\s+(?:right now|currently|now|today|in present time|at present|at the moment|so far)$")
ASOF = re.compile(r"\s+as of\s+.*$")
PREPOSITIONS = {"of", "in", "on", "at", "for", "to", "the", "a", "an", "by", "with", "from"}


# ---- questions into statements -------------------------------------------------------------------------------------

@cache
def _nlp() -> Any:
    import spacy

    return spacy.load(SPACY_MODEL, disable=["ner", "lemmatizer"])


def plain_question(question: str) -> str:
    """The question's words as the rules read them: lower case, contractions spelt out, no as-of clause or "now"."""
    text = " ".join(question.lower().replace("?", " ").split())
    text = re.sub(r"^(who|what|when|where)(?:'s| s)\b", r"\1 is", text)
    text = re.sub(r"^whats\b", "what is", text)
    return NOW_WORDS.sub("", ASOF.sub("", text)).strip()


IRREGULAR = {"get": "got", "win": "won", "go": "went", "come": "came", "beat": "beat", "make": "made", "have": "had",
             "lose": "lost", "take": "took", "begin": "began", "sing": "sang", "leave": "left", "become": "became",
             "run": "ran", "fall": "fell", "hold": "held", "give": "gave", "see": "saw", "find": "found",
             "break": "broke", "put": "put", "set": "set", "lead": "led", "meet": "met", "do": "did", "be": "was",
             "play": "played", "buy": "bought", "sell": "sold", "write": "wrote", "say": "said", "pay": "paid"}


def past(verb: str) -> str:
    """A base verb's simple past (a verb already past, as "did ... won" has it, stays)."""
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb in IRREGULAR.values() or verb.endswith("ed"):
        return verb
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    return verb + "ed"


def third_person(verb: str, plural: bool) -> str:
    if plural:
        return verb
    if verb == "have":
        return "has"
    if re.search(r"(s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _prep(answer: str) -> str:
    return "on" if FULL_DATE.match(answer.strip()) else "in"


Maker = Callable[[str], list[str]]
"""An answer -> one or more statements of it (the templates pick one)."""


def _split_verb(text: str, tags: tuple[str, ...]) -> tuple[str, str, str, str] | None:
    """(words before the first verb of ``tags``, the verb, its tag, the words after) in ``text``; None without one.
    The first word is never the verb (it starts the subject)."""
    doc = _nlp()(text)
    for token in doc[1:]:
        if token.tag_ in tags:
            return doc[:token.i].text, token.text, token.tag_, doc[token.i + 1:].text
    return None


def _plural(subject: str) -> bool:
    doc = _nlp()(subject)
    heads = [t for t in doc if t.dep_ == "ROOT"]
    return bool(heads) and heads[0].tag_ in {"NNS", "NNPS"}


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def _last_time(rest: str) -> Maker | None:
    """"when was the last time the raiders made the playoffs" -> "the raiders last made the playoffs in 2016"."""
    split = _split_verb(rest, ("VBD", "VBZ", "VBP", "VBN"))
    if split is None:
        return None
    subject, verb, _, tail = split
    if verb in {"did", "does", "do"}:  # "the last time italy did not qualify": keep it as written
        return lambda a: [f"the last time {rest} was {_prep(a)} {a}"]
    if verb in {"was", "were", "is", "are"}:  # "auburn was last in march madness"
        return lambda a: [_dated(_join(subject, verb, adverb, tail), a) for adverb in ("last", "most recently")]
    return lambda a: [_dated(_join(subject, adverb, verb, tail), a) for adverb in ("last", "most recently")]


def _dated(clause: str, answer: str) -> str:
    """The clause, then "in 2016" / "on June 7, 2019" (one preposition where the clause already ends with it)."""
    prep = _prep(answer)
    return f"{clause} {answer}" if clause.endswith(f" {prep}") else f"{clause} {prep} {answer}"


def _aux_first(subject: str, aux: str, verb: str) -> tuple[str, str]:
    """Words the question put before the participle that belong after the auxiliary: "the olympics last were held"
    -> "the olympics were last held", "the winter olympics being are held" -> "... are being held"."""
    moved = re.search(r"\s+(last|being|to be)$", subject)
    if moved:
        return subject[:moved.start()], f"{aux} {moved.group(1)} {verb}"
    return subject, f"{aux} {verb}"


def _when(aux: str, rest: str) -> Maker | None:
    """"when did/does SUBJ VERB ..." and "when is SUBJ VERB-ing ...": the statement dates the event."""
    if aux in {"did", "does", "do"}:
        split = _split_verb(rest, ("VB", "VBP", "VBD"))
        if split is None or not split[0]:
            return None
        subject, verb, _, tail = split
        said = past(verb) if aux == "did" else third_person(verb, aux == "do" or _plural(subject))
        return lambda a: [_dated(_join(subject, said, tail), a)]
    split = _split_verb(rest, ("VBG", "VBN"))
    if split is None or split[0].split()[-1] in PREPOSITIONS:  # "the new episode of designated survivor"
        if _split_verb("x " + rest, ("VBD", "VBZ", "VBP", "VB", "MD")) is not None:
            return None  # not a noun phrase: "have i got news for you back on"
        return lambda a: [_dated(_join(rest, aux), a)]
    subject, said = _aux_first(split[0], aux, split[1])
    return lambda a: [_dated(_join(subject, said, split[3]), a)]


def _who(rest: str, head: str) -> Maker | None:
    """"who is the governor of X" -> "A is the governor of X" / "the governor of X is A"; "who won X" -> "A won X";
    "what nfl team has ..." -> "A, the nfl team, has ..."; "who did auburn beat in X" -> "auburn beat A in X"."""
    words = rest.split()
    if not words:
        return None
    if words[0] in {"did", "does", "do"}:
        split = _split_verb(" ".join(words[1:]), ("VB", "VBP", "VBD"))
        if split is None or not split[0]:
            return None
        subject, verb, _, tail = split
        said = past(verb) if words[0] == "did" else third_person(verb, words[0] == "do" or _plural(subject))
        stranded = re.match(r"^(to|against|with|for|from)\b\s*(.*)$", tail)
        if stranded:  # "who did green bay lose to in the playoffs" -> "green bay lost to A in the playoffs"
            return lambda a: [_join(subject, said, stranded.group(1), a, stranded.group(2))]
        return lambda a: [_join(subject, said, a, tail)]
    if words[0] in {"is", "are", "was", "were"} and len(words) > 1:
        thing = " ".join(words[1:])
        if _split_verb("x " + thing, ("VBG", "VBN", "VBD", "VBZ")) is None:  # "who is the governor of X"
            return lambda a: [f"{a} {words[0]} {thing}", f"{thing} {words[0]} {a}"]
    first = _split_verb("x " + rest, ("VBD", "VBZ", "VBP", "VBN"))
    if len(words) > 1 and first is not None and first[0] == "x":  # the verb right after "who": "who won X"
        return lambda a: [f"{a} {rest}"]
    return None


def _what(rest: str) -> Maker | None:
    """"what is the population of X" -> "the population of X is A"; "what nfl team has ..." -> "A, the nfl team,
    has ..." (the noun kept as an apposition)."""
    words = rest.split()
    if len(words) > 1 and words[0] in {"is", "are", "was", "were"}:
        thing = " ".join(words[1:])
        if _split_verb("x " + thing, ("VBG", "VBN", "VBD", "VBZ", "VBP")) is None:
            return lambda a: [f"{thing} {words[0]} {a}", f"{a} {words[0]} {thing}"]
        return None
    split = _split_verb(rest, ("VBZ", "VBD", "VBP"))
    if split is None or split[1] in {"did", "does", "do"}:
        return None
    noun, verb, _, tail = split
    return lambda a: [_join(f"{a}, the {noun},", verb, tail)]


def _how_many(rest: str) -> Maker | None:
    """"how many seasons of X are there" -> "there are A seasons of X"; "how many medals does usa have in X" ->
    "usa has A medals in X"; "how many episodes in X" -> "there are A episodes in X"."""
    there = re.match(r"^(.+?) (are|is|were|was|has|have) there(?: been)?(?: (.*))?$", rest)
    if there:
        noun, tail = there.group(1), there.group(3) or ""
        return lambda a: [_join("there are", a, noun, tail)]
    split = _split_verb(rest, ("VBZ", "VBP", "VBD"))
    if split and split[1] in {"does", "do", "did", "has", "have"}:
        noun, aux, _, clause = split
        inner = _split_verb(clause, ("VB", "VBN", "VBP", "VBD"))
        if inner is None or not inner[0]:
            return None
        subject, verb, _, tail = inner
        if aux in {"has", "have"}:
            said = f"{aux} {verb}"
        else:
            said = past(verb) if aux == "did" else third_person(verb, aux == "do" or _plural(subject))
        if noun == "times":  # "how many times have the falcons beat the seahawks"
            return lambda a: [_join(subject, said, tail, a, noun)]
        return lambda a: [_join(subject, said, a, noun, tail)]
    if split is None and re.match(r"^\w+ (?:in|of) ", rest):
        return lambda a: [_join("there are", a, rest)]
    return None


def _where(rest: str) -> Maker | None:
    """"where was the final game of the world series played" -> "the final game of the world series was played in A"."""
    words = rest.split()
    if not words or words[0] not in {"is", "are", "was", "were"}:
        return None
    split = _split_verb(" ".join(words[1:]), ("VBN",))
    if split is None or not split[0]:
        return None
    subject, said = _aux_first(split[0], words[0], split[1])
    tail = re.sub(r"\s*\b(at|in)$", "", split[3])
    return lambda a: [_join(subject, said, tail, "in", a)]


def _noun_phrase(text: str) -> Maker | None:
    """A question that is only a noun phrase ("current captain of the england test team") -> "A is the ..."."""
    text = re.sub(r"\s+is(?: the)?$", "", text)
    if _split_verb("x " + text, ("VBD", "VBZ", "VBP", "MD")) is not None:
        return None
    thing = text if text.split()[0] in {"the", "a", "an"} else f"the {text}"
    return lambda a: [f"{a} is {thing}", f"{thing} is {a}"]


def statement_maker(question: str) -> Maker | None:
    """The rules, in order; None when none of them reads the question (it is then not drawn)."""
    text = plain_question(question)
    last = re.match(r"^(?:when (?:is|was) (?:the )?last time|last time) (.+)$", text)
    if last:
        return _last_time(last.group(1))
    head, _, rest = text.partition(" ")
    if head == "when":
        aux, _, clause = rest.partition(" ")
        return _when(aux, clause) if aux in {"did", "does", "do", "is", "are", "was", "were"} and clause else None
    if head == "who":
        return _who(rest, head)
    if head in {"what", "which"}:
        return _what(rest)
    if head == "how" and rest.split()[:1] in (["many"], ["much"]):
        return _how_many(rest.partition(" ")[2])
    if head == "where":
        return _where(rest)
    if head not in {"how", "why", "is", "are", "does", "do", "did", "name", "list", "so"} and len(text.split()) > 2:
        return _noun_phrase(text)
    return None


# ---- passages, rows, the corpus ------------------------------------------------------------------------------------

def _shown(date: str) -> tuple[str, str]:
    """({date}, {when}) as a template writes them."""
    if len(date) == 4:
        return date, f"in {date}"
    day = datetime.fromisoformat(date)
    shown = f"{day:%B} {day.day}, {day.year}"
    return shown, f"on {shown}"


def worded(statement: str, source: str, template: int, date: str) -> tuple[str, str]:
    """The passage text without a date and with one (the ``_meta`` and ``_text`` corpora)."""
    shown, when = _shown(date)
    first = statement.split()[0]
    capital = statement[:1].upper() + statement[1:] if first.islower() else statement  # not "IOS 9"
    fields = {"S": capital, "s": statement, "date": shown, "when": when}
    plain, dated = SOURCES[source][template]
    return plain.format(**fields), dated.format(**fields)


def content_words(text: str) -> set[str]:
    """The words that say what a text is about (SQuAD-normalised, function words left out)."""
    return {w for w in normalize_answer(text).split() if w not in STOP}


def overlaps(a: Timeline, b: Timeline) -> bool:
    """Two questions too close to share a corpus: most of their words, two answers, or some words and an answer
    ("who made the most three point shots in the nba" and "who has scored the most 3 pointers in nba history")."""
    wa, wb = content_words(plain_question(a.question)), content_words(plain_question(b.question))
    jaccard = len(wa & wb) / max(1, len(wa | wb))
    shared = {e.key for e in a.entries} & {e.key for e in b.entries}
    return jaccard >= 0.5 or len(shared) >= 2 or (jaccard >= 0.25 and bool(shared))


def candidates(path: Path, seed: int, excluded: set[str], counts: Counter[str]) -> list[tuple[Timeline, Maker, list]]:
    """Every question not in v1 that a rule words and that has a plain and an as-of row (v1's ``pair``)."""
    found = []
    for item in timelines(path, counts):
        if item.id in excluded:
            counts["left out: in v1"] += 1
            continue
        maker = statement_maker(item.question)
        if maker is None:
            counts["left out: no rule words the question"] += 1
            continue
        rows = [r for form in item.forms if (r := row(item, form, [])) is not None]
        chosen = pair(rows, random.Random(f"{seed}-{item.id}-pair"))
        if not chosen:
            counts["left out: no plain and as-of row"] += 1
            continue
        found.append((item, maker, chosen))
    counts["candidates"] = len(found)
    return found


def draw(found: list[tuple[Timeline, Maker, list]], questions: int, seed: int,
         counts: Counter[str]) -> list[tuple[Timeline, Maker, list]]:
    """``questions`` of them in a seeded order, skipping one too close to a question already drawn."""
    order = found[:]
    random.Random(seed).shuffle(order)
    picked: list[tuple[Timeline, Maker, list]] = []
    for entry in order:
        if len(picked) == questions:
            break
        if any(overlaps(entry[0], p[0]) for p in picked):
            counts["skipped: too close to a drawn question"] += 1
            continue
        picked.append(entry)
    return picked


def build(path: Path, questions: int, seed: int) -> tuple[list[dict], list[dict], list[dict], Counter[str]]:
    """(rows, passages dated in metadata, the same dated in text, counts)."""
    counts: Counter[str] = Counter()
    excluded = {json.loads(line)["situatedqa_id"] for line in V1.read_text().splitlines() if line.strip()}
    picked = draw(candidates(path, seed, excluded, counts), questions, seed, counts)
    made = []  # (situatedqa id, entry index, source, meta text, dated text, date)
    for item, maker, _ in picked:
        rng = random.Random(f"{seed}-{item.id}-v2")
        sources = rng.sample(sorted(SOURCES), len(SOURCES)) * (1 + len(item.entries) // len(SOURCES))
        for i, entry in enumerate(item.entries):
            statement = rng.choice(maker(entry.answer))
            plain, dated = worded(statement, sources[i], rng.randrange(3), entry.date)
            made.append((item.id, i, sources[i], plain, dated, entry.date))
    random.Random(seed).shuffle(made)
    ids = {(qid, i): f"fv2-{n:04d}" for n, (qid, i, *_) in enumerate(made)}
    meta = [{"id": ids[(q, i)], "title": src, "text": plain, "metadata": {"date": date, "source": src}}
            for q, i, src, plain, _, date in made]
    text = [{"id": ids[(q, i)], "title": src, "text": dated, "metadata": {"source": src}}
            for q, i, src, _, dated, _ in made]
    unread = [p["id"] for p, m in zip(text, meta, strict=True) if passage_date_text(p["text"]) != m["metadata"]["date"]]
    if unread:  # the baseline's regex is part of the set's definition: every dated text must give its date back
        raise ValueError(f"dated texts whose date DATE_CUE does not read back: {unread[:5]}")
    rows = []
    for item, _, chosen in picked:
        for r in chosen:
            r = {k: v for k, v in r.items() if k != "passages"}
            r["id"] = r["id"].replace("freshness-", "freshness2-", 1)
            r["timeline"] = [{**t, "passage": ids[(item.id, i)]} for i, t in enumerate(r["timeline"])]
            rows.append(r)
            counts[f"rows {r['rule']}"] += 1
    counts["passages"] = len(made)
    return rows, meta, text, counts


# ---- the no-model rule baseline -------------------------------------------------------------------------------------

ASKED_AS_OF = re.compile(rf"\bas of ({DATE})\s*\??$", re.IGNORECASE)


def iso(shown: str) -> str:
    return shown if shown.isdigit() else datetime.strptime(shown, "%B %d, %Y").date().isoformat()


def moment(question: str) -> str | None:
    """The question's "as of DATE" (ISO), None when asked plainly (then the newest passage is wanted)."""
    found = ASKED_AS_OF.search(question.strip())
    return iso(found.group(1)) if found else None


def passage_date_text(text: str) -> str | None:
    """The date a cue word introduces in a text (DATE_CUE), ISO."""
    found = DATE_CUE.search(text)
    return iso(found.group(1)) if found else None


def passage_date(passage: Any) -> str | None:
    """Metadata ``date`` when there is one, else the date a cue word introduces in the text."""
    if passage.metadata.get("date"):
        return str(passage.metadata["date"])
    return passage_date_text(passage.text)


def newest_known(hits: list[Any], at: str | None) -> Any | None:
    """The newest dated passage known at ``at`` (all of them when None); a passage that cannot be placed against
    the moment (a year-only date in the moment's year) or has no date is not taken."""
    from freshness_set import on_or_before

    dated = [(d, h) for h in hits if (d := passage_date(h.passage)) is not None
             and (at is None or on_or_before(d, at) is True)]
    if not dated:
        return None
    return max(dated, key=lambda pair: tuple(int(x) for x in (pair[0].split("-") + ["0", "0"])[:3]))[1]


def repeating(hits: list[Any], question: str) -> list[Any]:
    """The passages that repeat most of the question's words (content words, the as-of clause left out): v1's
    "passages that repeat the question", for passages that no longer quote it."""
    wanted = content_words(plain_question(question))
    shares = [len(wanted & content_words(h.passage.text)) / max(1, len(wanted)) for h in hits]
    best = max(shares, default=0.0)
    return [h for h, share in zip(hits, shares, strict=True) if best > 0 and share == best]


RULES: dict[str, Callable[[list[Any], str], Any | None]] = {
    "newest in top-k": lambda hits, q: newest_known(hits, moment(q)),
    "repeat the question's words, then newest": lambda hits, q: newest_known(repeating(hits, q), moment(q)),
}
"""The no-model rules: (top-k hits, question) -> the passage whose answer they give, or None (unknown)."""


def baseline_scores(rows_path: Path, index_dir: Path) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per rule, per row id: as_of_correct, ramdocs_strict and whether a valid passage was retrieved. The rule's
    response is the answer its chosen passage states (what an exact reader of that passage would say)."""
    from tanglerag.datasets.registry import load_dataset
    from tanglerag.eval.passages import PassageBuilder
    from tanglerag.metrics.conflict import as_of_correct, ramdocs_strict
    from tanglerag.runtime import Runtime
    from tanglerag.settings import Settings
    from tanglerag.types import Answer

    settings = Settings.load()
    runtime = Runtime(settings, index_dir=index_dir)
    builder = PassageBuilder([], runtime.embedder, settings.eval, runtime.index, retrieval=settings.retrieval)
    examples = load_dataset(str(rows_path))[1]
    stated = {t["passage"]: t["answer"] for ex in examples for t in ex.metadata["timeline"]}
    scores: dict[str, dict[str, dict[str, float | None]]] = {name: {} for name in RULES}
    for example in examples:
        hits = builder.build(example, settings.retrieval.top_k)
        valid = {t["passage"] for t in example.metadata["timeline"]
                 if normalize_answer(t["answer"]) in {normalize_answer(a) for a in example.answers}}
        retrieved = float(any(h.passage.id in valid for h in hits))
        for name, rule in RULES.items():
            chosen = rule(hits, example.question)
            text = stated.get(chosen.passage.id, "") if chosen is not None else ""
            answer = Answer(question=example.question, method=name, text=text, is_unknown=not text)
            scores[name][example.id] = {"as_of_correct": as_of_correct(answer, example),
                                        "ramdocs_strict": ramdocs_strict(answer, example), "valid retrieved": retrieved}
    return scores


def baseline_report(rows_path: Path, indexes: dict[str, Path]) -> list[str]:
    """One Markdown table: each corpus variant and rule, on the tune half, the check half and both (halves.py)."""
    from halves import split

    from tanglerag.tables import Table

    table = Table(["corpus", "rule", "half", "rows", "as-of correct", "strict", "valid passage in top-k"])
    for variant, index_dir in indexes.items():
        for rule, rows in baseline_scores(rows_path, index_dir).items():
            halves = split(rows)
            for name, ids in (("tune", halves["tune"]), ("check", halves["check"]), ("both", list(rows))):
                table.add(variant, rule, name, len(ids),
                          *(_mean([rows[i][m] for i in ids]) for m in ("as_of_correct", "ramdocs_strict",
                                                                        "valid retrieved")))
    return table.lines()


def _mean(values: list[float | None]) -> str:
    kept = [v for v in values if v is not None]
    return f"{100 * sum(kept) / len(kept):.1f} (n={len(kept)})" if kept else "-"


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    made = sub.add_parser("build", help="write the rows and the two corpora")
    made.add_argument("--input", type=Path, default=SITUATEDQA)
    made.add_argument("--questions", type=int, default=60, help="SituatedQA questions, two rows each")
    made.add_argument("--seed", type=int, default=0)
    made.add_argument("--out-dir", type=Path, default=DATA)
    base = sub.add_parser("baseline", help="the no-model rule over each index's top-k, per half")
    base.add_argument("--rows", type=Path, default=DATA / "freshness_v2_dev.jsonl")
    base.add_argument("--index-meta", type=Path, default=ROOT / "runs/freshness_v2/index-meta")
    base.add_argument("--index-text", type=Path, default=ROOT / "runs/freshness_v2/index-text")
    base.add_argument("--out", type=Path, help="write the Markdown tables here too")
    args = parser.parse_args()
    if args.command == "build":
        rows, meta, text, counts = build(args.input, args.questions, args.seed)
        write_jsonl(args.out_dir / "freshness_v2_dev.jsonl", rows)
        write_jsonl(args.out_dir / "freshness_v2_corpus_meta.jsonl", meta)
        write_jsonl(args.out_dir / "freshness_v2_corpus_text.jsonl", text)
        print(f"{len(rows)} rows, {len(meta)} passages to {args.out_dir}/freshness_v2_*; "
              + ", ".join(f"{k} {v}" for k, v in counts.items()))
    else:
        lines = baseline_report(args.rows, {"dates in metadata": args.index_meta, "dates in text": args.index_text})
        print("\n".join(lines))
        if args.out:
            args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
