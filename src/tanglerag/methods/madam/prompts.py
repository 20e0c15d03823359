"""MADAM-RAG's prompts, in our words: an agent answers from its one document (later rounds: seeing the other
agents' answers and the aggregator's summary, it may revise); the aggregator keeps every distinct entity's answer
and drops what the better-supported answers contradict. Each asks for text lines or, under ``llm.structured``,
JSON. The agent's document comes first, so one agent's calls across rounds share that prefix."""

from __future__ import annotations

from tanglerag.llm.base import with_worked_example
from tanglerag.trace import Message

AGENT_SYSTEM = (
    "You are one of several agents. You hold one document and answer a question from it alone; the other agents "
    "hold other documents, which may be about a different person or thing with the same name, or be wrong."
)
AGENT_TEXT = (
    "Reply in two lines, for example (for a question about a river):\nAnswer: the Danube\nReason: the document "
    "says the Danube flows through Vienna.\nIf your document does not answer the question, the first line is: "
    "Answer: unknown"
)
AGENT_JSON = ('Reply with JSON: {"answer": "the short answer your document gives, or unknown", '
              '"reason": "one sentence on what in your document supports it"}')
REVISE = (
    "The other agents answered as below, and the aggregator summed up the last round. Keep your answer if your "
    "document supports it (another agent may be about a different one with the same name); change it only if the "
    "others show that you misread your document."
)

AGGREGATOR_SYSTEM = (
    "You read the answers of agents, each of whom read one document, to one question. A name may refer to several "
    "people or things, so several answers can all be right, each about a different one. Keep every answer a "
    "document supports for its own entity; drop an answer that better-supported answers about the same entity "
    "contradict, and answers of agents who found nothing."
)
AGGREGATOR_TEXT = (
    "List every answer you keep, one per line, as: answer | which one it is about | [agent numbers]\n"
    "Then a last line starting with Summary: on what you kept and dropped, and why.\n"
    "Write unknown if no agent found an answer."
)
# The worked exchange shown before the real one (llm.base.with_worked_example): written inside the instructions,
# the example came back as the answer to other questions ("1963 | the basketball player").
AGGREGATOR_EXAMPLE_ASKED = (
    "Question: When was Michael Jordan born?\nAgents:\n"
    "Agent 1: 1963. The document says the basketball player Michael Jordan was born in 1963.\n"
    "Agent 2: 1956. The document says the scientist Michael I. Jordan was born in 1956.\n"
    "Agent 3: 1963. The document gives the basketball player's birth year as 1963.\n"
    "Agent 4: 1998. The document says the basketball player was born in 1998.\n\n"
)
AGGREGATOR_EXAMPLE_REPLY = (
    "1963 | the basketball player | [1][3]\n1956 | the scientist | [2]\n"
    "Summary: 1963 and 1956 are about two people with the same name; agent 4's 1998 contradicts agents 1 and 3."
)
AGGREGATOR_JSON = (
    'Reply with JSON: {"answers": [{"answer": "...", "about": "which one it is about", "contexts": [agent '
    'numbers]}], "summary": "one or two sentences on what you kept and dropped, and why"}. If no agent found an '
    'answer, give one entry with "answer": "unknown".'
)


def agent_messages(question: str, document: str, others: str | None, summary: str, *,
                   as_json: bool = False) -> list[Message]:
    """``others``: the other agents' last answers (None in the first round, when the agent reads alone)."""
    debate = "" if others is None else f"{REVISE}\nOther agents:\n{others}\nAggregator: {summary or 'none'}\n\n"
    user = (f"Document: {document}\n\n{debate}Question: {question}\n"
            f"{AGENT_JSON if as_json else AGENT_TEXT}")
    return [Message(role="system", content=AGENT_SYSTEM), Message(role="user", content=user)]


def aggregator_messages(question: str, answers: str, *, as_json: bool = False) -> list[Message]:
    task = AGGREGATOR_JSON if as_json else AGGREGATOR_TEXT
    user = f"Question: {question}\nAgents:\n{answers}\n\n{task}"
    if as_json:
        return [Message(role="system", content=AGGREGATOR_SYSTEM), Message(role="user", content=user)]
    return with_worked_example(AGGREGATOR_SYSTEM, (AGGREGATOR_EXAMPLE_ASKED + task, AGGREGATOR_EXAMPLE_REPLY), user)
