"""Prompts of COrg and its baselines, written for a small local model.

Every prompt that reads all of a question's contexts starts with the same system message and
the same numbered context block, and puts its task last. Run one after another (the eval
runner goes question by question), they share that long prefix in the llama.cpp KV cache, so
the graph constructor, Base, Retrieve and Summarize pay for the contexts about once.
"""

from __future__ import annotations

from tanglerag.text import clip_words
from tanglerag.trace import Message

READER_SYSTEM = "You read numbered contexts and then do the task written after them. Follow its output format exactly."


def with_contexts(block: str, task: str) -> list[Message]:
    return [Message(role="system", content=READER_SYSTEM),
            Message(role="user", content=f"Contexts:\n{block}\n\n{task}")]


# Probed on RAMDocs dev (benchmarks/multi_answer_probe.py, docs/results/multi_answer_probe.md): with the answer,
# descriptor and citations as three "|"-separated fields the 1.5B model gives a descriptor for ~80% of its answers
# (~12% with "answer (descriptor) [n]"), and the unknown line is worded as a last resort, because a plain "if no
# context answers, write unknown" made it abstain on 31-43% of questions that its contexts do answer.
MULTI_ANSWER_TASK = (
    "Question: {question}\n"
    "The contexts may describe different people or things with this name, and they may disagree. List every "
    "different answer they give, one per line, as: answer | which one it is about | [context numbers]\n"
    "For example:\n"
    "July 27, 2007 | The Simpsons movie | [1][3]\n"
    "December 17, 1989 | The Simpsons TV series | [2]\n"
    "Write unknown only if none of the contexts is about what the question asks.\n"
    "Answers:"
)

MULTI_ANSWER_JSON_TASK = (
    "Question: {question}\n"
    "The contexts may describe different people or things with this name, and they may disagree. Reply with JSON: "
    "under answers, one entry for every different answer they give, with the answer, which one it is about, and "
    "the numbers of the contexts that give it. For example:\n"
    '{{"answers": [{{"answer": "July 27, 2007", "about": "The Simpsons movie", "contexts": [1, 3]}}, '
    '{{"answer": "December 17, 1989", "about": "The Simpsons TV series", "contexts": [2]}}]}}\n'
    'If none of the contexts is about what the question asks, give one entry with "answer": "unknown".'
)

RELATION_DEFINITIONS = (
    "Question: {question}\n"
    "For each context, think of three things: which one of the people or things with this name it is about, "
    "the descriptor that says so (a place, a year, a kind of thing; or none), and its answer to the question.\n"
    "Relations between two contexts:\n"
    "none - one of them does not answer the question, or only one has a descriptor and the answers differ\n"
    "distracting - both have descriptors and they name different ones\n"
    "ambiguous - only one of them has a descriptor, and the answer is the same\n"
    "counterfactual - same descriptor but a different answer\n"
    "duplicated - same descriptor and the same answer\n"
)
RELATION_TASK = RELATION_DEFINITIONS + (
    "Give the relation from context {focal} to each of the contexts {others}: one line per context with its "
    "number in brackets, a dash and one of the five relation names."
)
RELATION_JSON_TASK = RELATION_DEFINITIONS + (
    "Reply with JSON. First, under notes, write for context {focal} and each of the contexts {others} which one it "
    "is about, its descriptor and its answer, in a few words. Then give the relation from context {focal} to each "
    "of them, with one key per context (context_2 for [2]) and one of the five relation names as its value."
)

EXTRACT_SYSTEM = (
    "You read one context and a question. The name in the question may belong to several people, places or works, "
    "so say which one the context is about. Write exactly three lines:\n"
    "Entity: the name as the context gives it, in full\n"
    "Descriptor: what tells this one apart from others with the same name (a place, a year, a kind of thing), "
    "or none\n"
    "Answer: the answer the context states, in a few words, or unknown if it does not state one\n"
    "Example. Context: Springfield, a city in Clark County, Ohio, counted 58,662 residents in 2020. "
    "Question: What is the population of Springfield?\n"
    "Entity: Springfield\nDescriptor: city in Clark County, Ohio\nAnswer: 58,662"
)
EXTRACT_JSON_SYSTEM = (
    "You read one context and a question. The name in the question may belong to several people, places or works, "
    "so say which one the context is about. Reply with JSON:\n"
    "entity: the name as the context gives it, in full\n"
    "descriptor: what tells this one apart from others with the same name (a place, a year, a kind of thing), "
    "or none\n"
    "answer: the answer the context states, in a few words, or unknown if it does not state one\n"
    "Example. Context: Springfield, a city in Clark County, Ohio, counted 58,662 residents in 2020. "
    "Question: What is the population of Springfield?\n"
    '{"entity": "Springfield", "descriptor": "city in Clark County, Ohio", "answer": "58,662"}'
)

RANK_TASK = (
    "Question: {question}\n"
    "Rank the contexts for answering the question: useful ones first, and prefer contexts that add a different "
    "answer or a different meaning of the name over repeats. Write only the context numbers, best first, "
    "separated by commas."
)

SUMMARY_TASK = (
    "Question: {question}\n"
    "Summarize what the contexts say about this question in at most five sentences. Keep every different "
    "answer together with what the name refers to in that context."
)

PLURAL_SYSTEM = (
    "Rewrite the question in plural form, so that it asks for all the answers for every thing the name may refer "
    "to. Change nothing else. Write only the rewritten question."
)

def multi_answer_messages(question: str, block: str, *, as_json: bool = False) -> list[Message]:
    return with_contexts(block, (MULTI_ANSWER_JSON_TASK if as_json else MULTI_ANSWER_TASK).format(question=question))


def relation_messages(question: str, block: str, focal: int, others: list[int], *,
                      as_json: bool = False) -> list[Message]:
    listed = ", ".join(f"[{o}]" for o in others)
    task = RELATION_JSON_TASK if as_json else RELATION_TASK
    return with_contexts(block, task.format(question=question, focal=f"[{focal}]", others=listed))


def extract_messages(question: str, text: str, max_words: int | None, *, as_json: bool = False) -> list[Message]:
    user = f"Question: {question}\nContext: {clip_words(text, max_words)}"
    system = EXTRACT_JSON_SYSTEM if as_json else EXTRACT_SYSTEM
    return [Message(role="system", content=system), Message(role="user", content=user)]


def rank_messages(question: str, block: str) -> list[Message]:
    return with_contexts(block, RANK_TASK.format(question=question))


def summary_messages(question: str, block: str) -> list[Message]:
    return with_contexts(block, SUMMARY_TASK.format(question=question))


PLURAL_JSON_SYSTEM = PLURAL_SYSTEM.replace("Write only the rewritten question.",
                                          'Reply with JSON: {"question": "the rewritten question"}')


def plural_messages(question: str, *, as_json: bool = False) -> list[Message]:
    return [Message(role="system", content=PLURAL_JSON_SYSTEM if as_json else PLURAL_SYSTEM),
            Message(role="user", content=question)]
