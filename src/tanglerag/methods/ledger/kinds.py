"""What a document is, read from its file name, title, headings and first words: release notes or a changelog, a
README, a correction or erratum, a draft, proposal or roadmap, an official register, an informal post (a blog, a forum
thread, a chat export). People's folders say so in these places ("CHANGELOG.md", "## 2.4.0 - 2024-06-11",
"Correction:", "DRAFT - for discussion", "Register of ...", "anglers-forum-thread.txt", "Posted by Gary"), and the
kind decides what a date alone cannot: release notes change what a README says, a correction replaces what it
corrects, a draft is not yet in force, a register outranks the pages that copy it, and one person's post speaks
after the page of the body whose rule or product it describes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from tanglerag.text import normalize_answer
from tanglerag.types import RetrievedPassage

DocumentKind = Literal["changelog", "readme", "correction", "draft", "register", "informal"]

_HEAD_CHARS = 300
"""How much of a passage's start (with its title and headings) is read for what the document says it is: a word
deep in an article ("the draft of the novel") says what it is about, not what it is."""

_NAMES: tuple[tuple[DocumentKind, re.Pattern[str]], ...] = (
    ("changelog", re.compile(r"(?:^|/)(?:changelog|changes|release[-_ ]?notes?|releases)(?:\.[^/]*)?$", re.I)),
    ("readme", re.compile(r"(?:^|/)readme(?:\.[^/]*)?$", re.I)),
    ("draft", re.compile(r"(?:^|/)roadmap(?:\.[^/]*)?$", re.I)),
    ("correction", re.compile(r"(?:^|[/_.-])(?:correction|corrigendum|erratum|errata)(?:\.[^/.]*)?$", re.I)),
    ("informal", re.compile(r"(?:^|[/_.-])(?:blogs?|forums?|thread|chats?|whatsapp|slack|facebook|twitter|reddit|"
                            r"discord|comments?)(?:[/_.-]|$)", re.I)),
)
"""File names and folders that say what a document is ("website-news-correction.html", h-quaybridge-surgery-1: a
correction's word ends the name; "errata-policy.html" is a policy). Not "review" (an annual review is a report) nor "post"
(a post office, a job post), nor "email" (an e-mail from the letting agent is the agent's word)."""
_WORDS: tuple[tuple[DocumentKind, re.Pattern[str]], ...] = (
    ("correction", re.compile(r"(?:^|\n)\W*(?:correction|corrigendum|erratum|errata)\b|\ban earlier version of this|"
                              r"\bthis (?:article|story|page|post) (?:has been|was) (?:corrected|updated to correct)",
                              re.I)),
    ("draft", re.compile(r"\b(?:draft|proposal|proposed (?:change|policy|amendment|rule)s?|request for comments|"
                         r"rfc\b|for discussion|not (?:yet )?(?:approved|adopted|in force)|pending (?:approval|"
                         r"adoption)|under consultation|consultation draft|wish list|not a promise)", re.I)),
    ("changelog", re.compile(r"^\W*(?:changelog|change log|release notes)\b|^#+\s*\[?(?:v\d+\.\d+|\d+\.\d+\.\d+)\]?"
                             r"(?:\s*[-(]\s*\d{4}-\d{2}-\d{2})?\s*$",
                             re.I | re.M)),
    ("register", re.compile(r"\b(?:official register|register of|registry of|statutory register|"
                            r"the (?:public|national|official) (?:register|registry))\b", re.I)),
    ("informal", re.compile(r"^\W*(?:posted by\b|thread:|re:\s)|\b(?:forum|group chat|chat export|shared post)\b",
                            re.I | re.M)),
)
_TITLED_CORRECTION = re.compile(r"\s[-\u2013\u2014:]\s*(?:correction|corrigendum|erratum)\s*(?:$|\|)", re.I)
"""A title ending on its kind ("Flu clinic date - correction | Quaybridge Surgery", h-quaybridge-surgery-1); in a
page's words the same ending is a heading of one item ("The date of the AGM - correction"), not what the page is."""
_TITLED_CHANGELOG = re.compile(r"\b(?:changelog|change log|release notes)\b", re.I)
"""Release notes named so in a title ("Pollux 1.3 release notes"); in a page's words, past a line's start, the
same names are what it refers to ("changes to the plugin API also need a changelog entry"), not what it is."""
_TITLED_REGISTER = re.compile(r"\b(?:(?:companies|company|land|charity|charities|business|trade) regist(?:er|ry)|"
                               r"statistic(?:s|al) (?:office|agency|bureau|authority)|census bureau|"
                               r"(?:office|bureau|institute) (?:of|for) (?:national )?statistics)\b", re.I)
"""A register named so in its title ("... - Northern Companies Registry"), or an official statistics body's page
("Brantwick parish - Census 2021 profile | Statistics Office", f-brantwick-census-1: the figure three village pages
copy wrong); in a page's words the same names are what it is about ("we checked the land registry before we made an
offer"), not what it is."""
_ADOPTED = re.compile(r"(?<!not )(?<!not yet )\b(?:adopted|approved|ratified|in force|final version|agreed)\b",
                      re.I)
_DRAFTING = re.compile(r"\b(?:draft|proposal|not (?:yet )?(?:approved|adopted))\b", re.I)
_DECIDED = re.compile(r"(?<!not )\bcarried\b(?!\s+(?:over|forward|out|on|through|into|away)\b)|"
                      r"\b(?:permission|consent|approval)\s+(?:is\s+|was\s+|has\s+been\s+)?granted\b", re.I)
"""A decision recorded under its proposal: a vote that carried the motion ("31 for, 8 against - carried by more than
two thirds", h-wyebrook-bowls-1) or a planning notice's "Decision: PERMISSION GRANTED" under its "Proposal:" (f-marshcote-
fields-1): the proposal is adopted, wherever in the passage the outcome is written (a motion's or an application's
words come first, so its outcome is often past the opening the other adoption words are read in). Not "not carried",
nor leave "carried over" or work "carried out"."""


def document_kind(metadata: Mapping[str, Any], title: str, text: str) -> DocumentKind | None:
    """The kind a passage's document declares, by its file name first, then its title and opening words; None for
    every other document (most are). A page that says it was adopted is no draft, even if it mentions one, nor
    minutes or a notice recording that a proposal carried or was granted."""
    path = metadata.get("path") or metadata.get("source_id") or ""
    for kind, pattern in _NAMES:
        if isinstance(path, str) and pattern.search(path):
            return kind
    head = f"{title}\n{text[:_HEAD_CHARS]}"
    for kind, pattern in _WORDS:
        if pattern.search(head) or (kind == "changelog" and _TITLED_CHANGELOG.search(title)):
            if kind == "draft" and (_ADOPTED.search(head) or _DECIDED.search(text)) and not _DRAFTING.search(title):
                continue
            return kind
    if _TITLED_CORRECTION.search(title):
        return "correction"
    return "register" if _TITLED_REGISTER.search(title) else None


_PLANS = re.compile(r"\b(?:propos\w*|planned|planning|scheduled|roadmap|upcoming|coming soon|next release)\b",
                    re.I)
"""Not "plan" (an insurance plan, a gym plan) nor "will" ("when will the bridge reopen" asks what is in force)."""


def asks_about_drafts(question: str) -> bool:
    """A question about what a draft, proposal or roadmap says ("what does the proposal change", "what is planned
    for the next release"): drafts then answer it."""
    return bool(_DRAFTING.search(question) or _PLANS.search(question))


_TITLE_WORDS = 3
"""A title short enough to be generic ("Changelog", "Minutes") names no one document."""


def about_what_it_corrects(passages: list[RetrievedPassage], kinds: Mapping[str, str],
                           scores: dict[str, float]) -> dict[str, float]:
    """``scores`` with each correction that names another passage's document by its title (``Erratum to:
    "Community gardening and loneliness ..."``) as on topic as that passage: an erratum speaks of "the participants"
    and "the original article", not of the study's gardening and its people, and read by its own words it is off
    topic beside the article it corrects (b-meadowfield-study-1)."""
    titles = {hit.passage.id: f" {title} " for hit in passages if kinds.get(hit.passage.id) != "correction"
              and len((title := normalize_answer(hit.passage.title)).split()) >= _TITLE_WORDS}
    out = dict(scores)
    for hit in passages:
        if kinds.get(hit.passage.id) == "correction":
            text = f" {normalize_answer(hit.passage.text)} "
            named = [scores.get(pid, 0.0) for pid, title in titles.items() if title in text]
            out[hit.passage.id] = max([out.get(hit.passage.id, 0.0), *named])
    return out
