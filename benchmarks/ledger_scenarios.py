"""Issue 60's scenario suite: does an answer settle conflicts the way a person expects, on document sets the rules
were not tuned on?

tests/data/ledger_scenarios.yaml holds small document sets a person could have (an amended policy beside a rumour, an
as-of question, a year that is the topic, two people of one name, a rumour copied three times...), each with what a
careful person expects: the value the answer leads with, every value it asserts, values it must not assert, and the
kind of conflict report. Each scenario's documents are the question's own passages, in their order (no index, no
retrieval: what is scored is how the evidence is settled, not what a retriever finds), and each method answers them:

- ``ledger``, ``concat`` or any registered method, on the embedded model of the settings (``Settings.load()``; every
  call goes through the project's LLM client and its disk cache), or with ``--canned`` on no model at all: each
  claim call is answered from the YAML's ``claim`` of the one document in its prompt (what a careful reader takes
  from it), so the ledger's rules after the claims run for real. A call that is not about one document (concat's
  one prompt, the prior policy's closed-book call) cannot be answered from the YAML: that answer is a miss naming
  the call, and a method all of whose answers are such misses is reported as not run.
- ``rule``, a baseline with no model: the newest dated document on or before the question's explicit "as of" date
  among those holding at least half of the question's content words; without a dated one, the first document that
  holds them, else the first document. It answers what a careful reader of that one document answers (its YAML
  claim, or unknown), so its row measures which document a date rule picks; its report kind is not scored.

Scoring, on the answer's text without its "Set aside:" lines (the ledger lists the sides it set aside there; they
are shown, not asserted; ``tanglerag.text.asserted_text``): lead right when the first asserted line holds the
``lead`` value (or, when ``lead`` is null, the answer is unknown); all right when, besides, every ``asserted`` value is there, no
``not_asserted`` value is, and the report kind is right. A value is there when its normalised words
(``tanglerag.text.normalize_answer``) occur as whole words. The report kind is the answer's ``ConflictStep.overall``
("none" without reports), right when it is ``report`` or one of ``report_any``; a method that records no
``ConflictStep`` is not scored on it.

Usage: .venv/bin/python benchmarks/ledger_scenarios.py [--canned] [--methods ledger,concat,rule] [--set KEY=VALUE]
         [--scenarios PATH] [--only ID_OR_CASE ...] [--hash-embedder] [--out docs/results/ledger_scenarios.md]
         [--json PATH]
Without --canned it loads the embedded model: run it as a model job, one at a time.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from tanglerag.conflicts import ConflictStep, parse_authority, parse_date
from tanglerag.llm.client import LLM
from tanglerag.llm.factory import build_llm
from tanglerag.methods.base import Resources, make_method
from tanglerag.methods.ledger.moment import as_of
from tanglerag.methods.ledger.relevance import content_stems
from tanglerag.settings import Settings
from tanglerag.testing import CannedBackend, HashEmbedder
from tanglerag.text import asserted_text, is_unknown, normalize_answer
from tanglerag.trace import Message
from tanglerag.trust import TrustConfig
from tanglerag.types import Passage, Question, RetrievedPassage

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests/data/ledger_scenarios.yaml"
CASES = ("amendment", "rumour", "as-of", "topic-year", "authority", "agreement", "complementary", "same-name", "copies",
         "self-contradiction", "relevance", "misinformation", "trust")
KINDS = ("none", "complementary", "outdated", "misinformation", "conflicting_opinions")
RULE = "rule"


# ---------------------------------------------------------------------------------------------------------- loading
def load_scenarios(path: Path = SCENARIOS) -> list[dict[str, Any]]:
    """The scenarios of ``path``, refused with every problem listed when one breaks the format: a quote not in its
    text or an expected value no document holds would score a method against a typo, not against the rules."""
    scenarios = yaml.safe_load(path.read_text())
    problems = check(scenarios)
    if problems:
        raise ValueError(f"{path}: {len(problems)} problem(s):\n  " + "\n  ".join(problems))
    return scenarios


def _has(text: str, value: str) -> bool:
    """``value``'s normalised words occur in ``text`` as whole words ("5,000" is not in "15,000")."""
    wanted = normalize_answer(value)
    return bool(wanted) and f" {wanted} " in f" {normalize_answer(text)} "


def check(scenarios: Any) -> list[str]:
    """What is wrong with the scenarios' format, one line each; empty when nothing is."""
    if not isinstance(scenarios, list):
        return ["the file must hold one list of scenarios"]
    problems, seen = [], set()
    for n, scenario in enumerate(scenarios):
        sid = scenario.get("id", f"#{n}")
        say = problems.append
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", str(sid)) or sid in seen:
            say(f"{sid}: id must be unique kebab-case")
        seen.add(sid)
        if scenario.get("case") not in CASES:
            say(f"{sid}: case {scenario.get('case')!r} is not one of {', '.join(CASES)}")
        if not str(scenario.get("question", "")).strip():
            say(f"{sid}: no question")
        documents = scenario.get("documents") or []
        problems += [f"{sid}: {p}" for p in _check_documents(documents)]
        problems += [f"{sid}: {p}" for p in _check_expect(scenario.get("expect") or {}, documents)]
    return problems


def _check_documents(documents: list[dict[str, Any]]) -> list[str]:
    problems = [] if 2 <= len(documents) <= 6 else [f"{len(documents)} documents (2 to 6)"]
    ids = [d.get("id") for d in documents]
    if len(set(ids)) != len(ids) or not all(ids):
        problems.append("document ids must be given and unique")
    for doc in documents:
        text, claim, meta = str(doc.get("text", "")), doc.get("claim"), doc.get("metadata") or {}
        if not 1 <= len(re.findall(r"[.!?](?:\s|$)", text)) <= 3:
            problems.append(f"{doc.get('id')}: text of 1 to 3 sentences")
        try:
            parse_date(meta.get("date"))
            parse_authority(meta.get("authority"), {"official": 3, "reference": 2, "news": 1, "community": 0})
        except Exception as exc:  # noqa: BLE001 - InputError, reported with the document
            problems.append(f"{doc.get('id')}: {exc}")
        if claim is None:
            continue
        if set(claim) != {"quote", "answer", "about"}:
            problems.append(f"{doc.get('id')}: a claim has quote, answer and about")
        elif claim["quote"] not in text:
            problems.append(f"{doc.get('id')}: quote {claim['quote']!r} is not copied from the text")
        elif not _has(text, claim["answer"]) and claim["answer"].lower() not in text.lower():
            problems.append(f"{doc.get('id')}: answer {claim['answer']!r} is not in the text")
    return problems


def _check_expect(expect: dict[str, Any], documents: list[dict[str, Any]]) -> list[str]:
    problems = []
    lead, asserted, refused = expect.get("lead"), expect.get("asserted"), expect.get("not_asserted")
    if not isinstance(asserted, list) or not isinstance(refused, list):
        return ["expect needs asserted and not_asserted lists"]
    if (lead is None) != (not asserted) or (lead is not None and lead not in asserted):
        problems.append("lead must be the first of asserted, or null with nothing asserted")
    texts = " ".join(d.get("text", "") for d in documents)
    problems += [f"value {v!r} is in no document" for v in asserted + refused if not _has(texts, v)]
    problems += [f"{v!r} and {w!r} contain one another" for v in asserted for w in refused if _has(v, w) or _has(w, v)]
    report, accepted = expect.get("report"), expect.get("report_any") or []
    if report not in KINDS or any(k not in KINDS for k in accepted) or (accepted and report not in accepted):
        problems.append(f"report {report!r} / report_any {accepted!r}: kinds are {', '.join(KINDS)}")
    return problems


def passages(scenario: dict[str, Any]) -> list[RetrievedPassage]:
    """The scenario's documents as the question's passages, in order, as a retriever would rank them."""
    docs = scenario["documents"]
    return [RetrievedPassage(passage=Passage(id=d["id"], title=d.get("title") or "", text=d["text"],
                                             metadata=d.get("metadata") or {}),
                             score=1.0 - i / 10, rank=i + 1) for i, d in enumerate(docs)]


# ----------------------------------------------------------------------------------------------------- canned model
class NotCanned(RuntimeError):
    """A call the scenario file cannot answer: it is not a claim about one of its documents."""


def claim_reply(scenario: dict[str, Any], messages: list[Message]) -> str:
    """The YAML claim of the one document the prompt holds, as JSON when the prompt asks for JSON, else as the
    ``Quote:`` / ``Answer:`` / ``About:`` lines; a document whose claim is null answers unknown. A prompt holding
    several documents' texts (concat's) or none (the prior policy's) raises NotCanned."""
    prompt = messages[-1].content
    found = {d["text"]: d for d in scenario["documents"] if d["text"] in prompt}
    found = {t: d for t, d in found.items() if not any(t != other and t in other for other in found)}
    if len(found) != 1:
        what = "no document" if not found else f"{len(found)} documents"
        raise NotCanned(f"a call about {what} ({prompt[-160:]!r}) is not a claim the scenario file answers")
    claim = next(iter(found.values())).get("claim") or {"quote": "", "answer": "unknown", "about": ""}
    if "json" in prompt.lower():
        return json.dumps(claim)
    return f"Quote: {claim['quote']}\nAnswer: {claim['answer']}\nAbout: {claim['about']}"


def canned_llm(scenario: dict[str, Any], settings: Settings) -> LLM:
    backend = CannedBackend(responder=lambda messages: claim_reply(scenario, messages), structured=True)
    return build_llm(settings.llm, settings.cache_dir, backend=backend)


# ----------------------------------------------------------------------------------------------------- rule baseline
def rule_pick(scenario: dict[str, Any]) -> dict[str, Any]:
    """The document the rule picks (see the module's docstring)."""
    docs, wanted = scenario["documents"], content_stems(scenario["question"])
    stated = as_of(scenario["question"])
    moment = stated.last_day if stated else None
    sharing = [d for d in docs if 2 * len(wanted & content_stems(f"{d.get('title', '')} {d['text']}")) >= len(wanted)]
    dated = [(date, -i, d) for i, d in enumerate(sharing)
             if (date := parse_date((d.get("metadata") or {}).get("date"))[0]) and (moment is None or date <= moment)]
    if dated:
        return max(dated, key=lambda t: t[:2])[2]
    return (sharing or docs)[0]


# ---------------------------------------------------------------------------------------------------------- scoring
class Outcome(BaseModel):
    """One method's answer to one scenario, and how it scored. A pydantic model, not a dataclass: a test loads this
    script by its path, as a module that ``sys.modules`` does not hold, which dataclasses cannot process."""

    id: str
    case: str
    method: str
    lead_right: bool
    all_right: bool
    report_right: bool | None  # None: not scored (the method records no ConflictStep)
    first_line: str
    report: str | None
    rule: str = ""
    failures: list[str] = Field(default_factory=list)
    error: str = ""
    calls: int = 0  # model calls the answer made (cached ones included: what it costs when made)
    seconds: float = 0.0  # their model seconds, as measured when each was made (a cached call keeps its own)


def asserted_lines(text: str) -> list[str]:
    """The answer's non-empty lines but its ``Set aside:`` ones, as the metrics read it."""
    return [line.strip() for line in asserted_text(text).splitlines() if line.strip()]


def score(scenario: dict[str, Any], method: str, text: str, unknown: bool, step: ConflictStep | None,
          report_scored: bool) -> Outcome:
    expect = scenario["expect"]
    lines = asserted_lines(text)
    first = lines[0] if lines else ""
    said = "\n".join(lines)
    unknown = unknown or not lines or is_unknown(first)
    lead = expect["lead"]
    failures = []
    lead_right = unknown if lead is None else (not unknown and _has(first, lead))
    if not lead_right:
        failures.append("unknown expected" if lead is None else f"lead {lead!r} not in the first line")
    failures += [f"{v!r} not asserted" for v in expect["asserted"] if v != lead and not _has(said, v)]
    failures += [f"{v!r} asserted" for v in expect["not_asserted"] if _has(said, v)]
    kind = (step.overall if step is not None else "none") if report_scored else None
    report_right = None
    if kind is not None:
        report_right = kind in (expect.get("report_any") or [expect["report"]])
        if not report_right:
            failures.append(f"report {kind}, expected {'/'.join(expect.get('report_any') or [expect['report']])}")
    rule = "; ".join(f"{r.kind}: {r.rule or 'no rule decided'}" for r in step.reports) if step is not None else ""
    return Outcome(id=scenario["id"], case=scenario["case"], method=method, lead_right=lead_right,
                   all_right=not failures, report_right=report_right, first_line=first or "(nothing asserted)",
                   report=kind, rule=rule, failures=failures)


def error_outcome(scenario: dict[str, Any], method: str, exc: Exception) -> Outcome:
    return Outcome(id=scenario["id"], case=scenario["case"], method=method, lead_right=False, all_right=False,
                   report_right=None, first_line="(no answer)", report=None, failures=[f"error: {exc}"],
                   error=f"{type(exc).__name__}: {exc}")


# ---------------------------------------------------------------------------------------------------------- running
def run_rule(scenario: dict[str, Any]) -> Outcome:
    claim = rule_pick(scenario).get("claim")
    text = claim["answer"] if claim else "unknown"
    return score(scenario, RULE, text, claim is None, None, report_scored=False)


def run_method(name: str, scenario: dict[str, Any], llm_of: Callable[[dict[str, Any]], LLM], settings: Settings,
               embedder: Any) -> tuple[str, bool, ConflictStep | None, tuple[int, float]]:
    if scenario.get("trust"):  # the operator's trust setting for this folder
        settings = settings.model_copy(update={"trust": TrustConfig.model_validate(scenario["trust"])})
    method = make_method(name, Resources.for_llm(llm_of(scenario), settings, embedder=embedder))
    answer = method.answer(Question(text=scenario["question"]), passages(scenario))
    total = answer.usage.total
    return (answer.text, answer.is_unknown, answer.trace.find(ConflictStep),
            (total.total_calls, round(total.model_seconds, 2)))


def run_all(scenarios: list[dict[str, Any]], methods: list[str], settings: Settings, canned: bool,
            embedder: Any) -> list[Outcome]:
    """Every method on every scenario; a method whose answer raises is a miss naming the error."""
    model: list[LLM] = []

    def llm_of(scenario: dict[str, Any]) -> LLM:
        if canned:
            return canned_llm(scenario, settings)
        if not model:
            model.append(build_llm(settings.llm, settings.cache_dir))
        return model[0]

    outcomes = []
    for name in methods:
        answered = []
        for scenario in scenarios:
            if name == RULE:
                answered.append(run_rule(scenario))
                continue
            try:
                answered.append(run_method(name, scenario, llm_of, settings, embedder))
            except Exception as exc:  # noqa: BLE001 - every failure (NotCanned included) is a miss of its own
                answered.append(exc)
        scored = any(isinstance(a, tuple) and a[2] is not None for a in answered)
        for scenario, got in zip(scenarios, answered, strict=True):
            if isinstance(got, Outcome):
                outcomes.append(got)
            elif isinstance(got, Exception):
                outcomes.append(error_outcome(scenario, name, got))
            else:
                text, unknown, step, (calls, seconds) = got
                outcome = score(scenario, name, text, unknown, step, report_scored=scored)
                outcomes.append(outcome.model_copy(update={"calls": calls, "seconds": seconds}))
        print(f"{name}: {summary([o for o in outcomes if o.method == name])}", file=sys.stderr, flush=True)
    return outcomes


def canned_outcomes(methods: tuple[str, ...] = ("ledger",), overrides: tuple[str, ...] = (),
                    path: Path = SCENARIOS) -> list[Outcome]:
    """Every scenario answered on canned claims, no model and no disk cache: what a unit test runs."""
    settings = Settings.load(overrides=[*overrides, "llm.cache=false"])
    return run_all(load_scenarios(path), list(methods), settings, canned=True, embedder=HashEmbedder())


# ---------------------------------------------------------------------------------------------------------- writing
def _count(hits: list[bool]) -> str:
    return f"{sum(hits)}/{len(hits)} ({100 * sum(hits) / len(hits):.1f}%)" if hits else "-"


def summary(outcomes: list[Outcome]) -> str:
    reports = [o.report_right for o in outcomes if o.report_right is not None]
    return (f"lead {_count([o.lead_right for o in outcomes])}, all {_count([o.all_right for o in outcomes])}, "
            f"report {_count(reports) if reports else 'not scored'}")


def _not_run(outcomes: list[Outcome]) -> bool:
    return bool(outcomes) and all(o.error for o in outcomes)


def markdown(outcomes: list[Outcome], methods: list[str], header: list[str]) -> str:
    """The score of each method, a row for each case, and every miss with what was expected and what came out."""
    by_method = {m: [o for o in outcomes if o.method == m] for m in methods}
    out = ["# Ledger scenarios (issue 60)", "", *header, "",
           "| method | lead right | all right | report right | calls / scenario | model s / scenario |",
           "|---|---|---|---|---|---|"]
    for method, rows in by_method.items():
        if _not_run(rows):
            why = ("its calls are not claims about one document: it needs the model" if "NotCanned" in rows[0].error
                   else rows[0].error[:100])
            out.append(f"| {method} | not run: {why} | | | | |")
            continue
        reports = [o.report_right for o in rows if o.report_right is not None]
        out.append(f"| {method} | {_count([o.lead_right for o in rows])} | {_count([o.all_right for o in rows])} | "
                   f"{_count(reports) if reports else 'not scored'} | {sum(o.calls for o in rows) / len(rows):.1f} | "
                   f"{sum(o.seconds for o in rows) / len(rows):.1f} |")
    shown = [m for m in methods if not _not_run(by_method[m])]
    out += ["", "## By case", "", "Each cell: lead right / all right / report right (- where not scored).", "",
            "| case | n | " + " | ".join(shown) + " |", "|---|---|" + "---|" * len(shown)]
    for case in CASES:
        cells = []
        for method in shown:
            rows = [o for o in by_method[method] if o.case == case]
            reports = [o.report_right for o in rows if o.report_right is not None]
            cells.append(f"{sum(o.lead_right for o in rows)} / {sum(o.all_right for o in rows)} / "
                         + (str(sum(reports)) if reports else "-"))
        n = len([o for o in outcomes if o.case == case and o.method == (shown or methods)[0]])
        if n:
            out.append(f"| {case} | {n} | " + " | ".join(cells) + " |")
    out += ["", "## Every miss", ""]
    for method in shown:
        misses = [o for o in by_method[method] if not o.all_right]
        out += [f"### {method}: {len(misses)} miss(es)", ""]
        out += [_miss_line(o) for o in misses] or ["None."]
        out.append("")
    return "\n".join(out)


def _miss_line(o: Outcome) -> str:
    report = f"; report {o.report}" + (f" ({o.rule})" if o.rule else "") if o.report is not None else ""
    first = o.first_line.replace("|", "/")
    return f"- `{o.id}` ({o.case}): {'; '.join(o.failures)}. Got: \"{first}\"{report}"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="ledger,concat", help=f"comma-separated methods; {RULE!r}: the baseline")
    parser.add_argument("--canned", action="store_true", help="answer claim calls from the YAML: no model")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="a settings override, as tanglerag's --set")
    parser.add_argument("--scenarios", type=Path, default=SCENARIOS)
    parser.add_argument("--only", nargs="+", default=[], help="scenario ids or cases to run")
    parser.add_argument("--hash-embedder", action="store_true", help="the hashing embedder, if a method embeds")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/ledger_scenarios.md")
    parser.add_argument("--json", type=Path, help="results as JSON (default: --out with .json)")
    args = parser.parse_args(argv)
    scenarios = [s for s in load_scenarios(args.scenarios) if not args.only or s["id"] in args.only
                 or s["case"] in args.only]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    settings = Settings.load(overrides=[*args.overrides, *(["llm.cache=false"] if args.canned else [])])
    embedder = HashEmbedder() if args.hash_embedder else None
    outcomes = run_all(scenarios, methods, settings, args.canned, embedder)
    model = ("canned claims from the scenario file (no model)" if args.canned
             else "none" if set(methods) == {RULE} else f"{settings.llm.backend} {settings.llm.model}")
    command = " ".join(["benchmarks/ledger_scenarios.py", *(argv if argv is not None else sys.argv[1:])])
    source = args.scenarios.resolve()
    shown = source.relative_to(ROOT) if source.is_relative_to(ROOT) else source
    header = [f"`{command}` at commit {_commit()}: {len(scenarios)} scenarios from `{shown}`.",
              f"Model: {model}. Overrides: {', '.join(args.overrides) or 'none'}."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(outcomes, methods, header) + "\n")
    results = {"command": command, "canned": args.canned, "overrides": args.overrides, "n": len(scenarios),
               "summary": {m: summary([o for o in outcomes if o.method == m]) for m in methods},
               "outcomes": [o.model_dump() for o in outcomes]}
    (args.json or args.out.with_suffix(".json")).write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
