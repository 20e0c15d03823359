"""An LLM-free CMD judge for CDIT (paper 003): dependency parses instead of a model's reading.

spaCy's parser gives the question's subject, predicate (verb lemma with its particle and negation),
object, attributives (adjective and number modifiers of those nouns) and adverbials (adverbs, time and
place phrases of the verb). A passage matches the question when one of its sentences has a verb close to
the predicate with the same negation and no opposite particle (so "switched off" never matches "switched
on"; particles must be equal), and noun phrases close to the question's subject and object (a wh-word matches anything; a light
verb such as "be" leaves the match to the nouns). Any verb of the sentence counts, not only its root:
passages state facts in relative clauses and participles ("a film directed by ..."). ``phi1+phi2`` also
requires the question's modifiers: its numbers exactly, its other modifiers by similarity. The paper names dependency
parsing as the way to drop the LLM; how far it agrees with the LLM judge is measured, not assumed.

>>> judge = SpacyJudge(embedder)  # doctest: +SKIP
>>> judge.judge("phi1", "Who switched on the radio?", ["Tom switched off the radio."])  # doctest: +SKIP
[False]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tanglerag.embeddings import TextEmbedder
from tanglerag.errors import ModelError
from tanglerag.stages.entities import SPACY_MODEL, load_spacy

WH_WORDS = {"who", "what", "which", "whom", "whose", "when", "where", "why", "how"}
SUBJECTS = {"nsubj", "nsubjpass", "csubj", "expl"}
OBJECTS = {"dobj", "attr", "oprd", "dative", "pobj"}
ATTRIBUTIVES = {"amod", "compound", "nummod", "poss"}
ADVERBIALS = {"advmod", "npadvmod", "tmod"}


@dataclass
class Clause:
    """The parts of one sentence a CMD compares; empty strings for parts the sentence lacks."""

    subject: str = ""
    predicate: str = ""
    particle: str = ""
    negated: bool = False
    object: str = ""
    attributives: list[str] = field(default_factory=list)
    adverbials: list[str] = field(default_factory=list)


def _phrase(token: Any) -> str:
    """The noun with its compounds, lower-cased (wh-words kept as they are)."""
    parts = [t.text for t in token.children if t.dep_ == "compound"] + [token.text]
    return " ".join(parts).lower()


def clause(sentence: Any) -> Clause:
    """Parts of a parsed spaCy sentence (its root verb; the copula's attribute counts as the object); no
    predicate when the root is not a verb (a fragment such as "Radio?")."""
    root = sentence.root
    found = Clause(predicate=root.lemma_.lower() if root.pos_ in {"VERB", "AUX"} else "")
    nouns = []
    for child in root.children:
        if child.dep_ in SUBJECTS and not found.subject:
            found.subject = _phrase(child)
            nouns.append(child)
        elif child.dep_ == "prt":
            found.particle = child.text.lower()
        elif child.dep_ == "neg":
            found.negated = True
        elif child.dep_ in OBJECTS and not found.object:
            found.object = _phrase(child)
            nouns.append(child)
        elif child.dep_ == "prep":
            objects = [g for g in child.children if g.dep_ == "pobj"]
            if objects and not found.object and root.lemma_ == "be":
                found.object = _phrase(objects[0])
                nouns.append(objects[0])
            elif objects:
                found.adverbials.append(f"{child.text.lower()} {_phrase(objects[0])}")
        elif child.dep_ in ADVERBIALS or child.ent_type_ in {"DATE", "TIME", "GPE", "LOC"}:
            found.adverbials.append(child.text.lower())
    for noun in nouns:
        found.attributives += [t.text.lower() for t in noun.children if t.dep_ in ATTRIBUTIVES - {"compound"}]
    return found


@dataclass
class Verb:
    lemma: str
    particle: str = ""
    negated: bool = False


@dataclass
class Facts:
    """What one passage sentence offers to match: every verb (with particle, negation), its noun phrases, numbers."""

    verbs: list[Verb]
    nouns: list[str]
    numbers: set[str]


LIGHT_VERBS = {"be", "have", "do"}  # "What is X?" names no relation to look for: the nouns must carry the match


def sentence_facts(sentence: Any) -> Facts:
    verbs = []
    for token in sentence:
        if token.pos_ in {"VERB", "AUX"} and token.dep_ not in {"aux", "auxpass"}:
            children = list(token.children)
            verbs.append(Verb(lemma=token.lemma_.lower(),
                              particle=next((c.text.lower() for c in children if c.dep_ == "prt"), ""),
                              negated=any(c.dep_ == "neg" for c in children)))
    nouns = [chunk.text.lower() for chunk in sentence.noun_chunks]
    nouns += [t.text.lower() for t in sentence if t.pos_ in {"PROPN", "NUM"} and t.text.lower() not in nouns]
    return Facts(verbs=verbs, nouns=nouns, numbers=set(re.findall(r"\d+", sentence.text)))


def _numbers(phrase: str) -> set[str]:
    return set(re.findall(r"\d+", phrase))


class SpacyJudge:
    """Judges passages against a question with dependency parses and phrase embeddings; no LLM."""

    def __init__(self, embedder: TextEmbedder, threshold: float = 0.5, model: str = SPACY_MODEL) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.model = model
        self._nlp: Any = None

    def warm_up(self) -> None:
        if self._nlp is None:
            try:
                self._nlp = load_spacy(self.model)
            except ModelError as exc:
                raise ModelError(f"the spaCy judge: {exc} (or set cdit.judge=llm)") from exc

    def judge(self, cmd: str, question: str, passages: list[str]) -> list[bool | None]:
        self.warm_up()
        asked = clause(next(iter(self._nlp(question).sents)))
        if not asked.predicate:
            return [None] * len(passages)
        facts = [[sentence_facts(s) for s in doc.sents] for doc in self._nlp.pipe(passages)]
        needed = [n for n in (asked.subject, asked.object) if n and n not in WH_WORDS]
        modifiers = asked.attributives + asked.adverbials if cmd == "phi1+phi2" else []
        phrases = sorted({asked.predicate, *needed, *modifiers,
                          *(p for doc in facts for f in doc for p in (*f.nouns, *(v.lemma for v in f.verbs)))})
        vectors = dict(zip(phrases, self.embedder.embed(phrases), strict=True))

        def close(a: str, b: str) -> bool:
            if a == b or f" {a} " in f" {b} ":
                return True
            if _numbers(a) and _numbers(b) and _numbers(a) != _numbers(b):
                return False  # "in 2019" and "in 2021" embed alike but say different things
            return float(np.dot(vectors[a], vectors[b])) >= self.threshold

        def agrees(f: Facts) -> bool:
            if asked.predicate not in LIGHT_VERBS:
                verbs = [v for v in f.verbs if close(asked.predicate, v.lemma)]
                # another particle (switched off / on) or a negation the question does not have breaks the match
                if not any(v.negated == asked.negated and v.particle == asked.particle for v in verbs):
                    return False
            words = f.nouns + [v.lemma for v in f.verbs]
            if any(not any(close(n, w) for w in words) for n in needed):
                return False
            for modifier in modifiers:
                if _numbers(modifier) and not _numbers(modifier) <= f.numbers:
                    return False
                if not _numbers(modifier) and not any(close(modifier, w) for w in words):
                    return False
            return True

        return [any(agrees(f) for f in doc) for doc in facts]
