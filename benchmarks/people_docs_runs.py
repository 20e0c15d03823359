"""What each stored run of benchmarks/people_docs.py is, what was tried and dropped, and when each batch was written.

Kept apart from the scorer so that docs/results/people_docs.md can list the runs as a table a reader can scan (one
row a run, in the order they are shown) rather than one paragraph; a run with no entry here is listed after these
under its label alone.
"""

from __future__ import annotations

DESCRIBED: dict[str, str] = {
    "rule": "the no-model baseline (module docstring of benchmarks/people_docs.py)",
    "concat": "the method as shipped: every retrieved passage, one call",
    "corg": "the method as shipped (paper 000)",
    "separate": "the method as shipped: one answer a passage",
    "ledger-main": "the ledger of commit 82c385f (before truth round 3), replayed on the same claims",
    "ledger-135c729": "the ledger of commit 135c729 (2026-12-06), with its ablations",
    "ledger": ("the ledger since 2026-12-07: it reads no claim from a passage about another question; since a later "
               "commit of that day on the folders indexed with `name-dates` (ablations `ledger-without-name-dates`, "
               "`ledger-without-replaced-value`); batches a-e, and batches g and f on the evening of 2026-12-07 (g at "
               "commit b9889fa, f at 653a150, whose dating reads a weekday before a date; batch i's check half at 7c78d7a)"),
    "ledger-passages": "`ledger.answer_from=passages`, as of 135c729",
    "vetted-135c729": ("`vetted` (the ledger's document rules without its claims, then one call: the issue's design "
                       "alternative) as of 135c729, with its ablations"),
    "vetted-90f2daa": ("as of 90f2daa (2026-12-07): dates read from more of the ways documents state them, a "
                       "document's kind shared by its chunks, `former-values`, `complementary`, `dates-across`"),
    "vetted-600456c": ("as of 600456c (2026-12-07): posts read as informal (`informal`), the answer's value overruled "
                       "wherever it is stated, values read with their title, table label or prose before them, a bare "
                       "number given its unit, `now`, roadmaps as drafts"),
    "vetted-d1868fb": ("as of d1868fb (2026-12-07), from the tune misses of batches a-e: `erratum-topic`, "
                       "`document-topic`, `release-dates`, `unstated-value`, `in-text-correction`, `named-newest`, "
                       "e-mails dated by their Date: line, values read through emphasis marks, glued units, 12 noon, "
                       "ISO dates, `asked-scope` (a value stated for another day, season, ticket class, plan tier or "
                       "year than the one asked read again from the sentences naming the asked one), "
                       "`document-heads`, numbers in words, `replaced-value`, `name-dates`, `several-answers` "
                       "(`vetted-d1868fb-without-asked-scope` is `vetted` as of 35116b5)"),
    "vetted-ead4edf": ("as of ead4edf (2026-12-07), from the tune misses of batch f: `month-moment`, a weekday in a "
                       "date names no day and a sentence is about the heading it sits under (`asked-scope`), a "
                       "statistics office's page a register, an amount keeps its own currency sign, 'rises from' "
                       "names a former value, `informal-older`, a length, mass or volume converted within 1% one "
                       "value (`same-value`), WhatsApp's slashed stamps, vehicle classes; its batch-g rows measured "
                       "before any rule was written from batch g"),
    "vetted-53c7a4e": ("as of 53c7a4e (2026-12-07), from batch g's tune misses: `undecided` (a document "
               "saying the asked value is not decided yet makes the answer unknown), an 'm' after a number a metre "
               "unless a plural follows ('5.2 m' had been 5.2 million), a count of a compound thing one with its last "
               "word's ('8 speed settings' and 'eight speeds'), `replaced-value` for a question about a moment when "
               "the cited passages are dated before it, a date written with its weekday after a cue read; with its "
               "ablation"),
    "vetted-29bfa78": ("as of 29bfa78 (the late evening of 2026-12-07), rules from the tune half's misses: `named-former` (a passage "
               "stating a value a cited document names as the one a change replaced, 'not 6:30', is set aside as "
               "outdated whatever the dates; '6:30' names 6:30pm there), `undecided` reads a value that is not "
               "published too ('we will not publish opening hours', 'charges on application', 'quoted on the day') "
               "and, with as many of the question's words, a note naming what the question names that no sentence "
               "stating the value names (the annexe, not the museum); `second-look` (an 'unknown' asked once more "
               "over the sentences of on-topic passages naming what the question names that hold its other words); "
               "with their ablations. The abstain asks' "
               "expected answers and reasons were read on both halves (one listing) before the cues were written; "
               "the cues are those of the tune half's documents; its batch-h rows measured before any rule was "
               "written from batch h"),
    "vetted-7c78d7a": ("as of 7c78d7a (2026-12-08, small hours): the rules of 29bfa78 and, from batch h's tune misses, `asked-band` (a value stated "
               "for another weight, length, age or age-group band than the question names, or that no passage on "
               "topic states, read again from the row whose band holds it: '| U9 - U12 | £20 |' for the Under 10s) "
               "and an amount ended at a list's comma ('£1.50, over-60s' had read as 150), an 'm' right after an "
               "amount a million ('£1.08m'), a value's words kept as written ('11am', not '11 am'), 'reducing "
               "... from six to five' naming six as former and a document that does so not set aside by "
               "`named-former`, a correction read from its file's name and its title's trailing '- correction'; "
               "after a review, each value paired with the band of its part of a sentence, `second-look`'s sentence "
               "never run on past a table row or a blank line; `range-end` (asked when a place closes, the first "
               "time of 'Sunday 10am-4pm' read as its end), `undecided` from an undated note too when it names what "
               "the question names and the figure's sentences do not; with the ablations of `range-end`, "
               "`asked-band`, `second-look` and `undecided`; its batch-i rows measured before any rule was written from batch i"),
    "vetted": ("the default method: the rules of 7c78d7a and minutes that record a proposal as carried read as no "
               "draft ('31 for, 8 against - carried' after the motion's words, past the opening where the other "
               "adoption words are read; from batch h's tune miss h-wyebrook-bowls-1)"),
    "vetted-sentences": ("`ledger.vetted_evidence=sentences` (the model reads each passage's title and its 3 "
                         "sentences most about the question), tune half only: it lost there, so it stays an option"),
    "ledger-asked-names-on": "the ledger of 135c729 with the asked-names rule on",
    "vetted-later-subject-on": ("the `later-subject` rule on (a value every cited passage states before it first "
                                "names what the question asks about is another thing's: unknown); off by default "
                                "since it cost a right answer on RAMDocs' check half"),
}
"""Each run's label and what it is; the key order is the order of the report's columns."""

TRIED = [
    ("`undecided` only from a note whose own words (its heading, sentence and the one before, not the page's title) "
     "name what the question asks about or a name its value's sentences lack (i-penhallow-physio-1: a clinic's "
     "'Shockwave therapy: Prices will be confirmed' made a follow-up's price unknown): tune +0 / +0 and check +0 / +0; "
     "the note's 'our physios' shares its six-letter stem with the clinic's name, so the ask it was for stayed unknown"),
    ("not reporting a blog, forum or chat post's value that a page beside the answer states too (the tariff's own "
     "multihull rate, the charges page's 1-bed price): tune +0 / +0, three false reports gone (i-kilnworth-pest-"
     "control-1, i-ravel-bay-marina-1, g-mistral-1) and three right ones lost, where the page names the post's value "
     "as the one it corrects or a change left behind in words the value reader does not take as former ('an earlier "
     "version of this article said ... 14 March', 'a big change from the 3 days')"),
    ("not reporting a blog, forum or chat post that states the answer's value too, its other values read as other "
     "cases it tells of (tune -1 / -4: i-kilnworth-pest-control-1 and i-ravel-bay-marina-1 lost their false reports, "
     "but copied falsehoods, corrections and authority asks lost their right ones, and three answers changed as their "
     "posts were no longer overruled)"),
    ("overruling only the cited passages that state the answer's value, not a chat cited beside the letter it was "
     "read from (tune +0 / +0: g-sorrel-court-1 right, f-skerry-router-1 wrong; check unchanged)"),
    ("a correction correcting only the values it names as wrong or in its note on an earlier version, not those it "
     "states beside them (tune half +0 / -1: the report it took away, a branch's date set aside as corrected, was "
     "of the kind the ask expects; the check half, replayed too, -1 / -2)"),
    ("a time of day written without am/pm ('6:30') the same value as either half day's in every comparison (-1 / -1 "
     "on the tune half: a 24-hour table's '10:00' came to state a '10:00 pm' answer's value, so that answer was no "
     "longer asked again); kept for a value a document names as replaced only"),
    ("taking an answer back as unknown when none of its cited passages names what the question names (5 right "
    "answers lost, 0 abstentions gained)"),
    ("ranking the passages whose document names every name the question asks about first (one fully right answer "
    "lost, the ask it was for still wrong)"),
    ("asking the model once more whether the sentence holding the answer's value is about exactly what the question "
    "names (it said yes to all 45 sentences of the 41 answers it read, the abstain asks' too)"),
    ("reporting as complementary every on-topic passage of another document that states another value no rule sets "
    "aside (7 fully right answers lost to a report where none was due, none gained)"),
    "the `now` rule for every question that names no year (2 right and 4 fully right answers lost, none gained)",
    "an unknown answer asked again over the passages titled for what the question names (no right answer gained)",
    ("a value standing against the answer only in a sentence sharing half the question's words, not a third "
    "(-1 / -1: fewer answers overruled)"),
    ("asking again over the passages naming the question's rarest name when no cited passage names it (-4 / -4 for "
    "+1 / +1: a company's policy never names the company)"),
    ("not reporting a blog, forum or chat post whose other values all sit in sentences less about the question than "
     "the answer's (batch g's tune half: 3 false conflict reports gone and 1 fully right answer gained, 8 right "
     "reports of misinformation lost, a post repeating a wrong figure being often less about the question too)"),
    ("asking an 'unknown' over passages on topic once more as concat asks (unranked, unlabelled): +2 / +1 on the tune "
     "half, nothing on the check half, and on RAMDocs' check half misinformation leaked in 46.9% of answers against "
     "40.6%: what the ranking had kept the model from answering, it answered"),
    ("reporting as outdated, for the report only, a disagreeing passage of another document naming every name the "
     "question asks about and dated before the cited one (-1 fully right on the tune half: a misread ask's older "
     "page reported; the ask it was for, e-haverleigh-museum-1, unchanged)"),
    ("showing the ranked passages in reverse, the most believable last, nearest the question, with the rule saying "
     "so (a small model is said to read the end of its prompt best): on the first 18 asks of the tune half 14 / 13 "
     "against 18 / 17 (4 answers taken from a lower-ranked passage, none gained), so the run was stopped there"),
]
"""Tried on the tune half and dropped, with what it cost there."""

BATCHES: dict[str, str] = {
    "e": "33 asks written after the rules of 600456c",
    "f": "49 asks written after the rules of d1868fb",
    "g": "54 asks written after the rules of ead4edf",
    "h": "52 asks written after the rules of 4859f2d",
    "i": "53 asks written after the rules of 7c78d7a",
}
"""Batches written after rules had been tuned: each gets a section of its own, 'Batch X alone'."""

PROVENANCE = (
    "The date phrasings of 90f2daa were found reading folders of both halves, so for dating the check half is no "
    "longer unseen; every rule since was written reading tune misses only. Batches e, f, g, h and i were each added after "
    "the rules named in their section, by helpers who saw none of the rules: a run of a commit older than a batch "
    "covers the batches before it only (`of N` under a half's size), and 'Batch X alone' shows the rules on folders "
    "none of them was written against. Every model call is the embedded 1.5B model's, through the disk cache (a "
    "ledger run after the first replays its claims)."
)
