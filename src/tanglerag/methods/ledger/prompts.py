"""The ledger's prompts, in our words: one passage at a time, the claim it makes (the words that state it, the
answer, what it is about); and, for the prior policy, the model's own answer without any passage. Short on
purpose: the prompt's length is most of a small model's cost, and each call sees one passage."""

from __future__ import annotations

from tanglerag.trace import Message

CLAIM_SYSTEM = (
    "You read one document and report what it says in answer to a question, in its own words. Other documents may "
    "be about another person or thing with the same name, or be wrong: answer from this document alone."
)
CLAIM_TEXT = (
    "Reply in three lines:\n"
    "Quote: the words of the document that give the answer, copied exactly\n"
    "Answer: the short answer they give\n"
    "About: who or what the answer is about, with what tells it apart from others of that name\n"
    "If the document does not answer the question, reply: Answer: unknown"
)
# the keys described in prose, not as a filled-in object: shown an object of descriptions, the 1.5B model copied
# them back as the values for documents that do not answer
CLAIM_JSON = (
    'Reply with JSON with three keys. "quote": the words of the document that give the answer, copied exactly. '
    '"answer": the short answer they give, or "unknown" if the document does not answer the question. '
    '"about": who or what the answer is about, with what tells it apart from others of that name.'
)

BRIEF_TEXT = (
    "Reply in two lines:\n"
    "Answer: the short answer the document gives\n"
    "About: who or what the answer is about, with what tells it apart from others of that name\n"
    "If the document does not answer the question, reply: Answer: unknown"
)
BRIEF_JSON = (
    'Reply with JSON with two keys. "answer": the short answer the document gives, or "unknown" if it does not answer '
    'the question. "about": who or what the answer is about, with what tells it apart from others of that name.'
)

CLAIMS_SYSTEM = (
    "You read numbered documents and report what each one says in answer to a question. Documents may be about "
    "another person or thing with the same name, or be wrong: report each document's own answer, not the one you "
    "believe."
)
CLAIMS_TEXT = (
    "For each document that answers the question, write one line: [n] the short answer it gives | who or what the "
    "answer is about, with what tells it apart from others of that name. Leave out documents that do not answer."
)
CLAIMS_JSON = (
    'Reply with JSON: {"claims": [...]}, one item for each document that answers the question, with three keys. '
    '"document": its number. "answer": the short answer it gives. "about": who or what the answer is about, with '
    'what tells it apart from others of that name. Leave out documents that do not answer.'
)

PRIOR_SYSTEM = "Answer from what you know. No documents are given."
PRIOR_TEXT = "Reply with the short answer only, or unknown."
PRIOR_JSON = 'Reply with JSON with one key, "answer": the short answer, or "unknown".'


def claim_messages(question: str, document: str, *, as_json: bool = False) -> list[Message]:
    """The document first: calls for one passage share that prefix whatever the question."""
    user = f"Document: {document}\n\nQuestion: {question}\n{CLAIM_JSON if as_json else CLAIM_TEXT}"
    return [Message(role="system", content=CLAIM_SYSTEM), Message(role="user", content=user)]


def brief_claim_messages(question: str, document: str, *, as_json: bool = False) -> list[Message]:
    """The question and the instructions first, the document last: one question's calls share all but the document
    (the model's cache reads that prefix once), and no quote is asked for (the passage's sentence holding the answer
    stands for it): the two costs of ``claim_messages`` on a CPU."""
    user = f"Question: {question}\n{BRIEF_JSON if as_json else BRIEF_TEXT}\n\nDocument: {document}"
    return [Message(role="system", content=CLAIM_SYSTEM), Message(role="user", content=user)]


def claims_messages(question: str, documents: str, *, as_json: bool = False) -> list[Message]:
    """Every document in one prompt, numbered as ``number_passages`` numbers them, then the question."""
    user = f"Documents:\n{documents}\n\nQuestion: {question}\n{CLAIMS_JSON if as_json else CLAIMS_TEXT}"
    return [Message(role="system", content=CLAIMS_SYSTEM), Message(role="user", content=user)]


def prior_messages(question: str, *, as_json: bool = False) -> list[Message]:
    user = f"Question: {question}\n{PRIOR_JSON if as_json else PRIOR_TEXT}"
    return [Message(role="system", content=PRIOR_SYSTEM), Message(role="user", content=user)]
