"""Issue 50, item 7: a freshness set made from SituatedQA-temp dev, for the `newest` and as-of rules.

Source and license: the questions, dates and answers come from SituatedQA (Zhang & Choi, EMNLP 2021),
mikejqzhang/SituatedQA @ 1ef85451 : data/qa_data/temp.dev.jsonl (copied unchanged into ../shared/data/situatedqa/);
its repository states no license, and its questions come from Natural Questions (CC BY-SA 3.0), so keep this
attribution with any copy. The passages are not SituatedQA's and not real-world text: this script writes them from
templates, one short passage per dated answer, so the set tests the date rules, not reading real corpora.

How a question becomes freshness rows:
- The records of one SituatedQA id are its dated variants ("... as of 2015", answer). Each *start* record (the date
  an answer began to hold) gives a timeline entry; an answer with no start record is dated by its earliest record
  (it held then). The same answer at consecutive entries is one entry (the earliest), and a year-only start is
  dropped where the same answer also has a full-date start in that year.
- Questions whose timeline states two or more distinct answers are kept (distinct = the first spelling of each
  record's answer list, SQuAD-normalised; the list's other spellings are the answer's aliases).
- Rows: the plain question, whose gold is the newest entry's answer (rule `newest`), and each "as of DATE" variant
  whose SituatedQA answer the as-of rule reproduces from the passages (rule `as-of`): the latest passage dated on or
  before the date, where a year-only date compares by year and "as of YEAR" counts the whole year. A variant the
  rule cannot decide (a year-only passage in the year of a full as-of date, two answers it cannot order, nothing
  dated before) or decides otherwise than SituatedQA (where its year and day annotations disagree) is left out.
- `answers` is the valid answer as the passages word it; `aliases` its other SituatedQA spellings; `wrong_answers`
  the answers the other passages state (those not inside a valid spelling), so `ramdocs_strict`, `misinfo_leak`,
  `tangle_score` and `as_of_correct` score "the answer valid then, and no other"; `newest_answer` and `timeline`
  keep the gold of both rules on every row.
- Passages: one per timeline entry, each worded by its source's own template (sources drawn by an RNG seeded with
  the seed and the question id) and carrying `date` (ISO `YYYY` or `YYYY-MM-DD`), `source` and `type` (valid,
  outdated, later, noise), plus one distractor: a passage of the neighbouring question in the file (another topic,
  its own date), so a rule that takes the newest passage whatever it answers is caught. Order shuffled.

Usage: .venv/bin/python benchmarks/freshness_set.py [--input ../shared/data/situatedqa/temp.dev.jsonl]
         [--questions 100] [--seed 0] --out benchmarks/data/freshness_dev.jsonl
(--questions N: N/2 SituatedQA questions drawn by the seed, each as its plain row and one as-of row, preferring an
as-of date whose answer is not the newest; without it every row of every kept question.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tanglerag.text import normalize_answer

SOURCES = (
    ("archive-1", "As of {date}, the answer to \"{question}\" is {answer}."),
    ("archive-2", "Update published {when}: {answer}. That is the answer to the question \"{question}\"."),
    ("archive-3", "Q: {question} A: {answer} (checked {when})."),
    ("archive-4", "Our records, last revised {when}, give {answer} in reply to \"{question}\"."),
    ("archive-5", "At the time of writing ({date}), the answer to \"{question}\" is {answer}."),
    ("archive-6", "Fact sheet dated {date}. Question: {question} Answer: {answer}."),
    ("archive-7", "A reader asked: {question} Our reply {when}: {answer}."),
    ("archive-8", "Entry of {date}. {answer} is what the record shows for \"{question}\""),
)
"""Made-up sources, each with its own wording, so one source always reads alike and the passages vary."""


@dataclass(frozen=True)
class Entry:
    """One dated answer of a question's timeline: what the passages state."""

    date: str  # ISO YYYY or YYYY-MM-DD
    answer: str  # the first spelling, as passages and gold word it
    aliases: tuple[str, ...]

    @property
    def key(self) -> str:
        return normalize_answer(self.answer)


@dataclass(frozen=True)
class Form:
    """A question row: the plain question (``as_of`` None) or one "as of DATE" variant, with its valid entry."""

    question: str
    as_of: str | None
    valid: int  # index into the timeline


@dataclass(frozen=True)
class Timeline:
    """A kept question: its dated answers and the rows the rules decide, with what they could not."""

    id: str
    question: str
    entries: tuple[Entry, ...]
    forms: tuple[Form, ...]
    left_out: Counter[str]


def iso_date(text: str) -> str:
    """SituatedQA writes "2019" or "May 28, 2019"; rows and passage metadata carry ISO."""
    text = " ".join(text.split())
    return text if text.isdigit() else datetime.strptime(text, "%B %d, %Y").date().isoformat()


def earlier(first: str, second: str) -> bool:
    """Strictly earlier, as far as the two dates' precision tells (2018 is not earlier than 2018-03-24, nor later)."""
    return first[:4] < second[:4] or (len(first) == len(second) and first < second)


def on_or_before(entry: str, as_of: str) -> bool | None:
    """Whether an entry dated ``entry`` was known at ``as_of``; None when the two cannot be ordered (a year-only date
    in the year of a full one). An as-of year counts the whole year, so its own year's entries are known."""
    if len(as_of) == 4 or len(entry) == len(as_of):
        return entry[:len(as_of)] <= as_of
    return None if entry[:4] == as_of[:4] else entry[:4] < as_of[:4]


def resolve(entries: tuple[Entry, ...], as_of: str) -> int | None:
    """The as-of rule: the latest entry known at ``as_of``; None when it cannot decide (an entry it cannot place
    against the date or against the chosen one, or none known yet)."""
    known = [on_or_before(e.date, as_of) for e in entries]
    if None in known or not any(known):
        return None
    chosen = max(i for i, k in enumerate(known) if k)
    rivals = [e for e, k in zip(entries, known, strict=True) if k and e.key != entries[chosen].key]
    return chosen if all(earlier(e.date, entries[chosen].date) for e in rivals) else None


def grouped(lines: Iterable[str]) -> Iterator[list[dict[str, Any]]]:
    """SituatedQA's records by question id, read as a stream (its ids are contiguous; a split one is refused)."""
    seen: set[str] = set()
    for key, records in itertools.groupby((json.loads(line) for line in lines if line.strip()),
                                          key=lambda r: str(r["id"])):
        if key in seen:
            raise ValueError(f"question id {key} appears in two separate runs of records; sort the file by id")
        seen.add(key)
        yield list(records)


def _answer(record: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    spellings = list(dict.fromkeys(" ".join(a.split()) for a in record["answer"] if a.strip()))
    return spellings[0], tuple(spellings[1:])


def _order(date: str) -> tuple[int, int, int]:
    year, month, day = (date.split("-") + ["0", "0"])[:3]
    return int(year), int(month), int(day)


def entries(records: list[dict[str, Any]]) -> tuple[Entry, ...]:
    """The timeline: start records, plus the earliest record of an answer that has none; see the module docstring."""
    dated = [Entry(iso_date(r["date"]), *_answer(r)) for r in records]
    starts = [e for e, r in zip(dated, records, strict=True) if r["date_type"] == "start"]
    unstarted = {e.key for e in dated} - {e.key for e in starts}
    firsts = [min((e for e in dated if e.key == key), key=lambda e: _order(e.date)) for key in sorted(unstarted)]
    precise = {(e.key, e.date[:4]) for e in starts if len(e.date) > 4}
    kept = sorted((e for e in [*starts, *firsts] if len(e.date) > 4 or (e.key, e.date) not in precise),
                  key=lambda e: _order(e.date))
    return tuple(e for i, e in enumerate(kept) if i == 0 or e.key != kept[i - 1].key)


def timeline(records: list[dict[str, Any]]) -> Timeline | None:
    """A question's timeline and the rows the rules decide; None when it states fewer than two distinct answers."""
    line = entries(records)
    if len({e.key for e in line}) < 2:
        return None
    forms, left_out = [], Counter[str]()
    if all(earlier(e.date, line[-1].date) for e in line[:-1]):
        forms.append(Form(records[0]["question"].strip(), None, len(line) - 1))
    else:
        left_out["plain: newest passage undecidable"] += 1
    for edited, record in {r["edited_question"].strip(): r for r in records}.items():
        valid = resolve(line, iso_date(record["date"]))
        if valid is None:
            left_out["as-of: rule undecidable"] += 1
        elif line[valid].key not in {normalize_answer(a) for a in record["answer"]}:
            left_out["as-of: rule disagrees with SituatedQA"] += 1
        else:
            forms.append(Form(edited, iso_date(record["date"]), valid))
    return Timeline(str(records[0]["id"]), records[0]["question"].strip(), line, tuple(forms), left_out)


def wrong_answers(line: tuple[Entry, ...], valid: int) -> list[str]:
    """The other entries' answers, less those inside a valid spelling (finding them would not mean a wrong answer)."""
    spellings = [f" {normalize_answer(a)} " for a in (line[valid].answer, *line[valid].aliases)]
    return list(dict.fromkeys(e.answer for e in line if e.key != line[valid].key
                              and not any(f" {e.key} " in s for s in spellings)))


def _worded(question: str, entry: Entry, source: int) -> dict[str, Any]:
    name, template = SOURCES[source]
    day = datetime.fromisoformat(entry.date) if len(entry.date) > 4 else None
    shown = f"{day:%B} {day.day}, {day.year}" if day else entry.date
    text = template.format(question=question[:1].upper() + question[1:].rstrip("?") + "?", answer=entry.answer,
                           date=shown, when=f"on {shown}" if day else f"in {shown}")
    return {"title": name, "text": text, "date": entry.date, "source": name}


def passages(item: Timeline, neighbour: Timeline | None,
             rng: random.Random) -> list[tuple[int | None, dict[str, Any]]]:
    """(timeline index, or None for the distractor; passage) in a shuffled order, each from its own source while
    the sources last; the distractor states another question's answer (none when the file has one question)."""
    sources = rng.sample(range(len(SOURCES)), len(SOURCES)) * (1 + len(item.entries) // len(SOURCES))
    made: list[tuple[int | None, dict[str, Any]]] = [
        (i, _worded(item.question, e, sources[i])) for i, e in enumerate(item.entries)]
    if neighbour is not None:
        made.append((None, _worded(neighbour.question, rng.choice(neighbour.entries), sources[len(item.entries)])))
    rng.shuffle(made)
    return made


def _kind(index: int | None, form: Form, line: tuple[Entry, ...]) -> str:
    if index is None:
        return "noise"
    if line[index].key == line[form.valid].key:
        return "valid"
    return "later" if index > form.valid else "outdated"


def row(item: Timeline, form: Form, made: list[tuple[int | None, dict[str, Any]]]) -> dict[str, Any] | None:
    """One question of the set, with its own copy of the passages typed for its rule; None when no other passage
    states an answer that would be wrong (nothing to test)."""
    line, valid = item.entries, item.entries[form.valid]
    wrong = wrong_answers(line, form.valid)
    if not wrong:
        return None
    suffix = "now" if form.as_of is None else f"asof-{form.as_of}"
    return {"id": f"freshness-{item.id}-{suffix}", "question": form.question, "answers": [valid.answer],
            "passages": [{"id": f"freshness-{item.id}-{suffix}-p{j}", **p, "type": _kind(i, form, line)}
                         for j, (i, p) in enumerate(made)],
            "tangles": ["temporal"], "aliases": list(valid.aliases), "wrong_answers": wrong,
            "rule": "newest" if form.as_of is None else "as-of", **({"as_of": form.as_of} if form.as_of else {}),
            "newest_answer": line[-1].answer, "timeline": [{"date": e.date, "answer": e.answer} for e in line],
            "situatedqa_id": item.id}


def timelines(path: Path, counts: Counter[str]) -> Iterator[Timeline]:
    """The kept questions in file order, counting what was read and what was left out."""
    with path.open(encoding="utf-8") as lines:
        for records in grouped(lines):
            counts["question ids"] += 1
            counts["records"] += len(records)
            counts["ids with 2+ dated variants"] += len(records) > 1
            item = timeline(records)
            if item is not None:
                counts["ids with 2+ distinct dated answers"] += 1
                counts.update(item.left_out)
                yield item


def neighboured(items: Iterator[Timeline]) -> Iterator[tuple[Timeline, Timeline | None]]:
    """Each question with the next one in the file (the last with the one before; a lone question with none), one
    question held back."""
    previous, pending = None, next(items, None)
    for item in items:
        assert pending is not None
        yield pending, item
        previous, pending = pending, item
    if pending is not None:
        yield pending, previous


def question_rows(path: Path, seed: int, counts: Counter[str]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(SituatedQA id, every row of that question), streamed; a question's passages depend on the seed and its id
    only, so the dev file's rows are the full set's rows."""
    for item, neighbour in neighboured(timelines(path, counts)):
        made = passages(item, neighbour, random.Random(f"{seed}-{item.id}"))
        made_rows = [r for form in item.forms if (r := row(item, form, made)) is not None]
        counts["rows left out: no other answer to get wrong"] += len(item.forms) - len(made_rows)
        counts.update(f"rows {r['rule']}" for r in made_rows)
        yield item.id, made_rows


def pair(rows: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """The dev file's two rows of a question: the plain one and an as-of one, preferring a date whose answer is not
    the newest (where `newest` alone would fail); none when the question lacks either."""
    plain = [r for r in rows if r["rule"] == "newest"]
    dated = [r for r in rows if r["rule"] == "as-of"]
    older = [r for r in dated if r["answers"][0] != r["newest_answer"]]
    return [plain[0], rng.choice(older or dated)] if plain and dated else []


def dev_rows(path: Path, seed: int, questions: int, counts: Counter[str]) -> Iterator[dict[str, Any]]:
    """``questions`` rows, half plain and half as-of, from questions drawn by the seed (two streamed passes)."""
    candidates = [qid for qid, rows in question_rows(path, seed, counts)
                  if pair(rows, random.Random(f"{seed}-{qid}-pair"))]
    counts["questions with a plain and an as-of row"] = len(candidates)
    picked = set(random.Random(seed).sample(candidates, min(questions // 2, len(candidates))))
    for qid, rows in question_rows(path, seed, Counter()):
        if qid in picked:
            yield from pair(rows, random.Random(f"{seed}-{qid}-pair"))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--input", type=Path, default=Path("../shared/data/situatedqa/temp.dev.jsonl"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--questions", type=int, help="an even number of rows: half plain, half as-of")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    chosen = (dev_rows(args.input, args.seed, args.questions, counts) if args.questions
              else (r for _, rows in question_rows(args.input, args.seed, counts) for r in rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with args.out.open("w", encoding="utf-8") as out:
        for record in chosen:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    print(f"{written} rows to {args.out}; the whole input: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
