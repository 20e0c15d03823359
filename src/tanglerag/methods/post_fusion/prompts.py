"""Prompts for the answer-integration strategies of "Modeling Uncertainty and Using Post-fusion as Fallback".

Written in our own words after the paper's structure: a task line, answer-format examples,
the instruction to say "unknown", then context and question. Instructions and the question come
before the varying passages so consecutive calls share a prefix the llama.cpp KV cache reuses.
"""

from __future__ import annotations

from tanglerag.stages.generate import FORMAT_EXAMPLES
from tanglerag.trace import Message

DISTILL_SYSTEM = (
    "You choose the correct answer to a question. Candidate answers were read from the passages one passage at "
    "a time, so some are wrong. Read the passages together and reply with the one candidate they best support, "
    "as a short phrase. If none of them is supported, reply with the single word: unknown"
)


def distill_messages(question: str, numbered_passages: str, candidates: list[str]) -> list[Message]:
    listed = "\n".join(f"- {c}" for c in candidates)
    user = (f"Question: {question}\n\nPassages:\n{numbered_passages}\n\nCandidate answers:\n{listed}\n\n"
            f"Question: {question}\nAnswer:")
    return [Message(role="system", content=DISTILL_SYSTEM), Message(role="user", content=user)]


_COT_SYSTEM = (
    "Answer questions with short factoid answers.\n"
    f"{FORMAT_EXAMPLES}\n"
    "Work in this format:\n"
    "Rationale: {rationale}\n"
    "Answer: the short answer, usually 1 to 5 words, or unknown if no source gives it.\n"
    "Always end with the line that starts with 'Answer:'."
)
PRUNING_SYSTEM = _COT_SYSTEM.format(
    rationale="think step by step: go through the sources, rule out each one that cannot answer the question, "
              "and answer from the ones that remain.")
SUMMARY_SYSTEM = _COT_SYSTEM.format(
    rationale="think step by step: pick out the sources that speak to the question, sum up what they say, "
              "and answer from that summary.")

_DEMO_CONTEXT = (
    "[1] Loch Ness | Loch Ness is a large, deep freshwater loch in the Scottish Highlands, about 37 km long, "
    "known for reported sightings of a monster nicknamed Nessie.\n"
    "[2] Urquhart Castle | Urquhart Castle is a ruined castle that sits beside Loch Ness, near the village of "
    "Drumnadrochit. It was blown up in 1692 to keep it from Jacobite forces.\n"
    "[3] Lake Bled | Lake Bled is a lake in the Julian Alps of Slovenia with a small island and a medieval "
    "castle on a cliff above its northern shore."
)
DEMO_QUESTION = "Which ruined castle stands on the shore of Loch Ness?"
PRUNING_DEMO_ANSWER = (
    "Rationale: Let's think step by step. Source 1 describes the loch but names no castle, so it is out. "
    "Source 3 is about a lake in Slovenia, so it is out too. Source 2 remains: it says Urquhart Castle is a "
    "ruined castle beside Loch Ness.\nAnswer: Urquhart Castle"
)
SUMMARY_DEMO_ANSWER = (
    "Rationale: Let's think step by step. The sources about Loch Ness are 1 and 2. Together they say that "
    "Loch Ness is a loch in the Scottish Highlands and that the ruined Urquhart Castle sits beside it. "
    "In short, the castle on its shore is Urquhart Castle.\nAnswer: Urquhart Castle"
)


def cot_messages(system: str, demo_answer: str, question: str, numbered_passages: str) -> list[Message]:
    """One-shot chain of thought: the demo is a full user/assistant exchange before the real question."""
    return [
        Message(role="system", content=system),
        Message(role="user", content=f"Context:\n{_DEMO_CONTEXT}\n\nQuestion: {DEMO_QUESTION}"),
        Message(role="assistant", content=demo_answer),
        Message(role="user", content=f"Context:\n{numbered_passages}\n\nQuestion: {question}"),
    ]
