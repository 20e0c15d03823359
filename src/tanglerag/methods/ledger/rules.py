"""Every rule the ledger applies, in one table: where it acts, what it does, its constants, and a dev ask of
benchmarks/data/people_docs (or a scenario of tests/data/ledger_scenarios.yaml) it is for. The trace names the rule
that dropped a claim (``Claim.dropped_by``, or ``relevant``/``grounded``), bounded or ignored a declaration
(``ConflictStep.trust``), read a document's kind (``ConflictStep.kinds``) and settled a dispute (each report's
``trials``). ``ledger.disabled_rules`` turns any of them off, which is how each one's worth is measured (the
ablation of docs/results/people_docs.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Stage = Literal["provenance", "claim", "sides", "policy", "vetting"]


@dataclass(frozen=True)
class Rule:
    name: str
    stage: Stage
    does: str
    example: str
    constants: dict[str, str] = field(default_factory=dict)


RULES: tuple[Rule, ...] = (
    Rule("trust", "provenance", "a document declares only the source, authority and date the trust setting lets it; "
         "an authority is bounded to the tiers' scale", "b-parental-leave-handbook-1",
         {"setting": "trust.declare, trust.others", "scale": "ledger.authority_tiers (top: official 3)"}),
    Rule("text-dates", "provenance", "a document with no date in its metadata is dated by its words: a cue and a "
         "date near its start or end, a changelog's dated version heading, a chat's first timestamp",
         "a-lantern-hill-coop-1", {"edge_chars": "300 (dating._STAMP_CHARS)"}),
    Rule("name-dates", "provenance", "a document dated neither by its metadata nor by its words is dated by its file's "
         "name ('visitor-leaflet-2021.md', 'newsletter-sept-2024.html'), when the index was built", "e-haverleigh-museum-1"),
    Rule("release-dates", "provenance", "vetted: a chunk of release notes is dated by the release it holds the notes "
         "of (the dated version heading it sits under, else opens with), not by the file's newest release",
         "e-quenby-cli-1"),
    Rule("document-kinds", "provenance", "what a document is (changelog, readme, correction, draft, register, informal "
         "post), from "
         "its file name, title and opening words", "b-pondlog-cli-1", {"head_chars": "300 (kinds._HEAD_CHARS)"}),
    Rule("document-heads", "provenance", "vetted: a chunk whose document's first chunk was not retrieved has that "
         "head read from the index for what the document is (an RFC's 'Status: Draft' above the summary found)",
         "a-silverbrook-project-1"),
    Rule("month-moment", "provenance", "a question closing on a month or a day ('... in February 2024?') asks for "
         "the value at that moment, as 'as of' does: documents dated after it are set aside and its year is no word a "
         "passage must hold; a bare year ('in 2024') stays what the question is about", "f-glimmet-cli-2"),
    Rule("grounding", "claim", "a claim whose passage holds neither its quote nor its answer's words decides nothing",
         "amendment-travel-allowance"),
    Rule("relevance", "claim", "a passage is read (its claim competes) only when it holds enough of the question's "
         "content words and every year it names; the others are listed as not read", "relevance-game-release",
         {"threshold": "ledger.relevance (0.5)"}),
    Rule("asked-names", "claim", "a claim competes only when its passage (with its title, source and path) names "
         "at least half of the names the question asks about: a page about another library, couple or plan "
         "answers nothing for this one (off by default: ledger.disabled_rules)", "d-library-hours-2"),
    Rule("answer-type", "claim", "a question asking for an amount of one kind (money, a duration, a weight, a "
         "volume, a length, a count) is not answered by a claim naming no amount of that kind",
         "d-stand-mixer-1"),
    Rule("drafts", "claim", "a claim read from a draft or proposal competes only when the question asks about one",
         "a-oakridge-primary-1"),
    Rule("scope", "claim", "when some claims are about a scope the question names (a plan, a region, a member "
         "class) and others about another one instead, the others compete for nothing", "c-gym-plans-1"),
    Rule("same-value", "sides", "answers naming one value in other words or units (30 minutes / half an hour, "
         "1.5 kg / 1,500 g, EUR 40 / 40 euros) are one side; quantities within 1% of each other are one (a unit "
         "converted and rounded: 16 km / 10 miles)", "d-coastal-hike-1", {"quantity_tolerance": "0.01 (values._ROUNDED)"}),
    Rule("copies", "sides", "near-identical passages are one document and one witness",
         "copies-bridge-opening", {"similarity": "ledger.duplicate_similarity (0.8)"}),
    Rule("descriptions", "sides", "two sides whose passages describe different things at length are different "
         "things, answered side by side", "same-name-anna-keller", {"overlap": "ledger.description_overlap (0.4)"}),
    Rule("supersede", "policy", "one source's newest statement supersedes its older ones", "a-ferncliff-handbook-1"),
    Rule("corrections", "policy", "a correction or erratum stands over what it corrects", "b-harbourton-bridge-1"),
    Rule("releases", "policy", "release notes or a changelog stand over the README", "b-pondlog-cli-1"),
    Rule("register", "policy", "an official register stands over the pages repeating another value",
         "b-ravensmoor-tile-works-1"),
    Rule("newest", "policy", "the newest dated side stands; 'as of DATE' picks the one valid then",
         "a-greyford-town-1"),
    Rule("authority", "policy", "the side of the more trusted document stands", "b-orrin-thermostat-1"),
    Rule("witnesses", "policy", "more independent sources win", "copies-bridge-opening"),
    Rule("provenance", "policy", "a dated, named source outranks an anonymous or undated one",
         "amendment-travel-allowance"),
    Rule("prior", "policy", "the model's own answer, without passages, picks a side", "(off by default)"),
    Rule("as-of", "vetting", "vetted: a document dated after the question's 'as of' date is left out (the ledger "
         "applies the moment in its newest policy)", "a-brightwater-library-2"),
    Rule("ranking", "vetting", "vetted: the passages are shown ranked, on topic, trusted, a correction, release notes "
         "or a register before an ordinary page and a README last, higher authority, newer, each labelled with its "
         "date and kind", "b-tessera-upload-2", {"on_topic": "ledger.relevance (0.5)"}),
    Rule("off-topic", "vetting", "vetted: when no passage it would show holds enough of the question's content words, "
         "the answer is that the documents do not say (no model call), as the ledger abstains when no claim "
         "competes", "d-makers-fair-1", {"on_topic": "ledger.relevance (0.5)"}),
    Rule("overruled", "vetting", "vetted: an answer resting on a passage a rule (trust, releases, corrections, "
         "register, newest) ranks below an on-topic passage stating another value of its kind is asked once more "
         "without it", "a-kestrel-ferry-1"),
    Rule("former-values", "vetting", "vetted: a value a passage gives as what held before a change ('100 MB (was "
         "25 MB)', 'shortened from 15 minutes to 3 minutes', 'up from £355') is not what it says holds: it neither "
         "agrees with an answer naming it nor stands against another", "b-tessera-upload-1"),
    Rule("dates-across", "vetting", "vetted: dates order dated passages of different sources too, newest first "
         "(off: only one source's, document's or title's); an undated passage keeps its place either way",
         "a-kestrel-ferry-1"),
    Rule("informal", "vetting", "vetted: a blog, forum or chat post (read from its file name or opening words) is "
         "ranked with a README, after the ordinary pages, whatever its date, and its value is set aside against one "
         "of theirs", "b-tile-grouting-guidance-1"),
    Rule("informal-older", "vetting", "vetted: a dated blog, forum or chat post older than the dated page that "
         "says otherwise is reported as outdated, not as misinformation: its value is the one the page changed since",
         "f-yarrowfield-ferry-1"),
    Rule("named-former", "vetting", "vetted: a passage stating a value that a passage it is set against names only as "
         "what a change or correction replaced ('Tuesday track is at 7pm now (not 6:30)', '10:40pm instead of "
         "11:10pm'; '6:30' for 6:30pm) loses to it as outdated, whatever their dates (an undated club page), after the "
         "document-kind rules and unless the question names the year it is about", "f-millbeck-runners-1"),
    Rule("now", "vetting", "vetted: a question asking for the value now ('now', 'current', 'latest') sets aside an "
         "older dated passage's other value, whoever wrote it (without it, only one source's, document's or title's "
         "older version)", "a-greyford-town-1"),
    Rule("document-topic", "vetting", "vetted: a chunk is at least as on topic as its document's retrieved chunks "
         "read together (a changelog's later chunk need not repeat the project's name)", "e-quenby-cli-1",
         {"on_topic": "ledger.relevance (0.5)"}),
    Rule("erratum-topic", "vetting", "vetted: a correction naming another passage's document by its title (3 words "
         "or more) is as on topic as that passage: an erratum speaks of 'the original article', not of its subject",
         "b-meadowfield-study-1", {"title_words": "3 (kinds._TITLE_WORDS)"}),
    Rule("in-text-correction", "vetting", "vetted: an answer that is a value a cited passage's own correction note "
         "says was wrong ('An earlier version of this article said ...') is written as the value the note gives",
         "e-dunmere-footbridge-1"),
    Rule("several-answers", "vetting", "vetted: a question asking for several things ('Who are the headliners', "
         "'What formats can I export to') has the model give every one the passages name, each cited: passages naming "
         "different ones do not disagree", "e-gullhaven-festival-1"),
    Rule("replaced-value", "claim", "a claim, or vetted's answer, of a value its passages name only as what a change "
         "replaced ('open at 10:30 instead of 11am' read as 11am) is read as the value they give in its place; for a "
         "question about a moment, only when vetted's cited passages are dated on or before it (g-sorrel-court-2)",
         "e-haverleigh-museum-1"),
    Rule("unstated-value", "vetting", "vetted: an answer that is a value no passage shown states anywhere is "
         "written as the value its cited passages all state of its kind in their sentence most about the question",
         "b-pellbridge-corn-exchange-1"),
    Rule("named-newest", "vetting", "vetted: an older dated passage stating another value is outdated by a newer "
         "cited one of another source too when both name every name the question asks about (a museum's 2021 "
         "leaflet under its 2024 e-mail)", "e-haverleigh-museum-1"),
    Rule("spelled-numbers", "vetting", "vetted: a number written in words in a passage is read as its digits ('two "
         "approving reviews' states 2, and gives a bare '2' its words); 'one' alone and ordinals stay words",
         "a-silverbrook-project-1"),
    Rule("asked-scope", "vetting", "vetted: an answer whose value is stated for another day, season, ticket class, "
         "vehicle class, (capitalised) plan tier or year than the question asks about (the 'Monday - Friday' row for "
         "a Saturday; a sentence naming none read with its label, heading and page's title) is read again from the sentences naming the asked one, the value most "
         "cited passages (else most shown ones) state there; with none, or for an answer that is a name, the "
         "documents do not say (a Gold plan's excess where only Silver's is stated)", "e-norrvik-parking-1"),
    Rule("range-end", "vetting", "vetted: an answer to when something closes, ends or finishes that is the first "
         "time of a range a cited sentence states ('Sunday 10am-4pm') is read as the range's end; to when it opens, "
         "starts or begins, a range's end is read as its start", "h-copper-kettle-1"),
    Rule("asked-band", "vetting", "vetted: an answer whose value its cited passages state only in rows or sentences whose weight, "
         "length, age or age-group band leaves out the one the question names ('a 30 kg labrador', 'a 78-year-old', "
         "'the Under 10s'), or that no passage on topic states, is read again from those whose band holds it ('| U9 - "
         "U12 | £20 |'); with none, it stands", "h-brackley-juniors-1"),
    Rule("later-subject", "vetting", "vetted: an answer whose value every cited passage states before it first names "
         "a name the question asks about (not in its title or section) is another thing's value: the documents do "
         "not say ('Maya: 2:30pm at the chapel!', then 'Tom and Aisha ... no times yet'; off by default: ledger.disabled_rules)",
         "d-wedding-plans-2"),
    Rule("undecided", "vetting", "vetted: an answer is unknown where a shown document no older than its own says the "
         "asked value is not decided yet ('We have not decided on pricing yet', 'prices will be announced in the new "
         "year', 'No price yet') or not published ('we will not publish opening hours', 'charges on application') in "
         "a sentence that, read with its title, heading and the sentence before it, holds more of the question's "
         "content words than the one the answer's value comes from, or as many and a name the question asks about "
         "that no sentence stating the value holds (e-haverleigh-museum-2)", "g-larkspur-cli-3"),
    Rule("second-look", "vetting", "vetted: an 'unknown' is asked once more over the sentences (up to 3, one a "
         "passage, each whole across wrapped lines) of on-topic passages naming every name the question asks about that "
         "hold the question's other content words (one in the sentence itself, the rest in it, its heading or its "
         "page's title and opening line): 'The tramway was closed in 1938' for when the Cragmoor tramway closed",
         "g-cragmoor-tramway-trail-2", {"sentences": "3 (second_look.LIMIT)", "window": "500 characters"}),
    Rule("complementary", "vetting", "vetted: a list answer whose items different documents state (one office a page) "
         "is reported as complementary, each item a side with its passages, not as a dispute", "c-orbin-offices-1"),
)
"""The table, in the order the ledger applies the rules; the vetting rules are ``vetted``'s, which also applies
trust, text-dates, document-kinds, drafts and supersede (to versions of one document) before its one call, and
releases, corrections, register and newest to what it sets aside after it."""

SWITCHABLE = frozenset(r.name for r in RULES if r.name not in {"grounding", "relevance", "copies", "descriptions",
                                                                 "spelled-numbers"})
"""Rules ``ledger.disabled_rules`` may turn off (the others have thresholds of their own: ``ledger.relevance=0``
lets every claim compete, and so on; ``spelled-numbers`` is how every passage's values are read, measured by the
commit that added it)."""


def markdown_table() -> str:
    """The table as docs/conflicts.md shows it (``tanglerag.catalog``), in the order the rules apply: what each does,
    its constants, the dev ask or scenario it is for, and whether ``ledger.disabled_rules`` can turn it off."""
    from tanglerag.tables import Table

    rows = [[f"`{rule.name}`", rule.stage, rule.does.replace("|", "/"),
             "; ".join(f"{key}: {value}" for key, value in rule.constants.items()) or "-", f"`{rule.example}`",
             "yes" if rule.name in SWITCHABLE else "no"] for rule in RULES]
    return Table(["rule", "stage", "what it does", "constants", "for", "can be turned off"], rows).markdown()

