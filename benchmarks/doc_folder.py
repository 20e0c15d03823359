"""Issue 63: two folders of real documents nobody here wrote, and a probe set of queries over each, for choosing the
chunking rule (benchmarks/chunking.py) and for comparing ingest with other libraries (benchmarks/ingest_vs_peers.py).

``folder(name)`` returns the folder, building it under runs/doc_folder/ (gitignored) when it is missing;
``probes(name)`` returns its probe set as stored in benchmarks/data/doc_probes_<name>.jsonl. Both folders are
built from pinned package versions, so every machine that can reach Debian's archive, PyPI and npm builds the same
files; the stored probes are the reference (``check`` rebuilds them and says whether they still match).

The folders (files chosen by name, listed below, not by chance):
  debian  the issue's folder, 47 files: 2 PDFs (the Debian FAQ, the Filesystem Hierarchy Standard 3.0), 20 HTML
          pages (the Debian New Maintainers' Guide, 11 pages; the Debian Developer's Reference, 9 chapters),
          20 Markdown files (pip's getting started, installation and 12 topic guides; 6 Node.js API pages),
          5 Word files made with python-docx from pip's UX-research Markdown.
  python  a second one, 42 files: 2 PDFs (the New Maintainers' Guide and the Developer's Reference as PDFs),
          20 HTML pages of Python 3.11's documentation (15 HOWTOs, 5 tutorial chapters), 15 other Node.js API
          pages (Markdown), 5 Word files made from npm packages' READMEs.

Sources and licences (the files are read from these packages, never stored in the repository; the probe sets quote
a dozen words of one sentence each):
  Debian bookworm packages, fetched with ``apt-get download`` and unpacked with ``dpkg-deb -x``:
    debian-faq 11.1 (the Debian FAQ; verbatim and modified copies permitted under its notice),
    debian-policy 4.6.2.0 (fhs-3.0.pdf: the FHS's own notice, copies permitted if the notice is kept),
    maint-guide 1.2.53 (GPL-2.0+), developers-reference 12.18 (GPL-2),
    python3.11-doc 3.11.2-6+deb12u8 (PSF License 2), nodejs-doc 18.20.4+dfsg-1~deb12u2 (Expat/MIT).
  pip 26.3's source distribution from PyPI (``pip download --no-binary :all: --no-deps pip==26.3``; MIT).
  npm packages (``npm pack``, all MIT): commander 12.1.0, yargs 17.7.2, chalk 5.3.0, debug 4.3.7, express 4.21.2.

The probe set: 60 queries a folder, each a sentence of one file (a PDF's: of one page) cut lightly (its first word
dropped, at most 14 words kept), so the file and the page that hold it are known. Up to 10 queries fall on each PDF
(the page measure needs them: 18 in debian, whose FAQ PDF pypdf reads with its spaces lost, has 8 sentences that
qualify; 20 in python) and the rest on the other files, one a file in a seeded order. A sentence qualifies
when it has 12-40 words, nine in ten of them plain words (not code, paths, tables or a running head), and its cut
text occurs in no other file and no other page of the folder. Each query's half (tune or check) is halves.half of
its id, seed 0: the chunking rule is chosen on the tune half and reported on the check half.

Usage: .venv/bin/python benchmarks/doc_folder.py build [debian python]   # the folders (a few minutes the first time)
       .venv/bin/python benchmarks/doc_folder.py probes --write           # regenerate the stored probe sets
       .venv/bin/python benchmarks/doc_folder.py check                    # rebuild the probes and compare
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

from halves import half

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "runs" / "doc_folder"
DATA = ROOT / "benchmarks" / "data"
NAMES = ("debian", "python")
PROBES_PER_FOLDER, PDF_PROBES_PER_FILE = 60, 10
SEED = 0

DEBS = {"debian-faq": "11.1", "debian-policy": "4.6.2.0", "maint-guide": "1.2.53", "developers-reference": "12.18",
        "python3.11-doc": "3.11.2-6+deb12u8", "nodejs-doc": "18.20.4+dfsg-1~deb12u2"}
PIP = "26.3"
NPM = ("commander@12.1.0", "yargs@17.7.2", "chalk@5.3.0", "debug@4.3.7", "express@4.21.2")

_MAINT = "usr/share/doc/maint-guide/html"
_DEVREF = "usr/share/developers-reference"
_NODE = "usr/share/doc/nodejs/api"
_PYDOC = "usr/share/doc/python3.11/html"
_PIPDOCS = f"pip-{PIP}/docs/html"
MAINT_PAGES = ("advanced", "build", "checkit", "dother", "dreq", "first", "index", "modify", "start", "update",
               "upload")
DEVREF_CHAPTERS = ("best-pkging-practices", "beyond-pkging", "developer-duties", "l10n", "new-maintainer", "pkgs",
                   "resources", "scope", "tools")
PIP_PAGES = ("getting-started", "installation", *(f"topics/{t}" for t in (
    "authentication", "caching", "configuration", "dependency-resolution", "https-certificates",
    "local-project-installs", "more-dependency-resolution", "python-option", "repeatable-installs", "secure-installs",
    "vcs-support", "workflow")))
PIP_UX = ("about-our-users", "ci-cd", "mental-models", "personas", "pip-search")
NODE_DEBIAN = ("console", "https", "path", "querystring", "timers", "tty")
NODE_PYTHON = ("cluster", "corepack", "debugger", "documentation", "domain", "embedding", "globals", "inspector",
               "intl", "permissions", "punycode", "repl", "report", "tracing", "wasi")
PY_HOWTO = ("annotations", "argparse", "curses", "descriptor", "enum", "functional", "instrumentation", "ipaddress",
            "isolating-extensions", "logging", "regex", "sockets", "sorting", "unicode", "urllib2")
PY_TUTORIAL = ("appetite", "controlflow", "errors", "interpreter", "modules")


def folder(name: str = "debian") -> Path:
    """The folder ``name`` (``debian`` or ``python``), built under runs/doc_folder/ when it is missing."""
    if name not in NAMES:
        raise ValueError(f"no doc folder {name!r}; there are {', '.join(NAMES)}")
    path = WORK / name
    if not (path / ".complete").exists():
        _build(name, path)
    return path


def probes(name: str = "debian") -> list[dict]:
    """The stored probe set of folder ``name``: {id, query, file (relative to the folder), page (PDFs, else None),
    half}, in id order."""
    lines = (DATA / f"doc_probes_{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _build(name: str, path: Path) -> None:
    unpacked = _sources()
    if path.exists():
        shutil.rmtree(path)
    for target, make in _plan(name, unpacked):
        target = path / target
        target.parent.mkdir(parents=True, exist_ok=True)
        make(target)
    (path / ".complete").write_text("")  # hidden: no loader reads it, and a half-built folder has none


def _plan(name: str, src: Path) -> Iterator[tuple[str, Callable[[Path], None]]]:
    """(path in the folder, how to make it) for every file of folder ``name``."""
    if name == "debian":
        yield "pdf/debian-faq.pdf", _gunzip(src / "usr/share/doc/debian/FAQ/debian-faq.en.pdf.gz")
        yield "pdf/fhs-3.0.pdf", _gunzip(src / "usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz")
        for page in MAINT_PAGES:
            yield f"html/maint-guide/{page}.html", _copy(src / _MAINT / f"{page}.en.html")
        for chapter in DEVREF_CHAPTERS:
            yield f"html/developers-reference/{chapter}.html", _copy(src / _DEVREF / f"{chapter}.html")
        for page in PIP_PAGES:
            yield f"md/pip/{page}.md", _copy(src / _PIPDOCS / f"{page}.md")
        for page in NODE_DEBIAN:
            yield f"md/nodejs/{page}.md", _gunzip(src / _NODE / f"{page}.md.gz")
        for page in PIP_UX:
            yield f"docx/pip-ux/{page}.docx", _word(src / _PIPDOCS / "ux-research-design/research-results" /
                                                   f"{page}.md")
    else:
        yield "pdf/maint-guide.pdf", _copy(src / "usr/share/doc/maint-guide/maint-guide.en.pdf")
        yield "pdf/developers-reference.pdf", _copy(src / _DEVREF / "developers-reference.pdf")
        for page in PY_HOWTO:
            yield f"html/howto/{page}.html", _copy(src / _PYDOC / "howto" / f"{page}.html")
        for page in PY_TUTORIAL:
            yield f"html/tutorial/{page}.html", _copy(src / _PYDOC / "tutorial" / f"{page}.html")
        for page in NODE_PYTHON:
            yield f"md/nodejs/{page}.md", _gunzip(src / _NODE / f"{page}.md.gz")
        for package in NPM:
            yield f"docx/npm/{package.split('@')[0]}.docx", _word(_readme(src / "npm" / package))


def _readme(package: Path) -> Path:
    return next(p for p in sorted(package.glob("package/*")) if p.name.lower() == "readme.md")


def _copy(source: Path) -> Callable[[Path], None]:
    return lambda target: shutil.copyfile(source, target)


def _gunzip(source: Path) -> Callable[[Path], None]:
    return lambda target: target.write_bytes(gzip.decompress(source.read_bytes()))


def _word(markdown: Path) -> Callable[[Path], None]:
    return lambda target: markdown_to_docx(markdown.read_text(encoding="utf-8"), target)


def _sources() -> Path:
    """Every source package fetched and unpacked once, under runs/doc_folder/unpacked (returned)."""
    downloads, unpacked = WORK / "downloads", WORK / "unpacked"
    done = unpacked / ".complete"
    if done.exists():
        return unpacked
    downloads.mkdir(parents=True, exist_ok=True)
    unpacked.mkdir(parents=True, exist_ok=True)
    for package, version in DEBS.items():
        deb = _deb(downloads, package, version)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
                    f"pip=={PIP}", "-d", str(downloads)], check=True)
    with tarfile.open(downloads / f"pip-{PIP}.tar.gz") as sdist:
        sdist.extractall(unpacked, members=[m for m in sdist.getmembers() if m.name.startswith(_PIPDOCS)],
                         filter="data")
    for package in NPM:
        subprocess.run(["npm", "pack", "--silent", package, "--pack-destination", str(downloads)], check=True,
                       capture_output=True)
        name, version = package.split("@")
        with tarfile.open(downloads / f"{name}-{version}.tgz") as tgz:
            tgz.extractall(unpacked / "npm" / package, filter="data")
    done.write_text("")
    return unpacked


def _deb(downloads: Path, package: str, version: str) -> Path:
    found = sorted(downloads.glob(f"{package}_*.deb"))
    if not found:
        subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=downloads, check=True,
                       capture_output=True)
        found = sorted(downloads.glob(f"{package}_*.deb"))
    return found[0]


_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def markdown_to_docx(markdown: str, target: Path) -> None:
    """A Word file as a person would make it from Markdown: headings as Heading 1-6, each paragraph (lines up to a
    blank one) as one paragraph, a fenced block's lines as they are; front matter and HTML comments dropped."""
    import docx

    document = docx.Document()
    paragraph: list[str] = []
    fenced = False

    def flush() -> None:
        text = " ".join(paragraph).strip()
        if text:
            document.add_paragraph(text)
        paragraph.clear()

    for line in re.sub(r"<!--.*?-->", "", markdown, flags=re.S).splitlines():
        if line.startswith(("```", "~~~")):
            flush()
            fenced = not fenced
            continue
        heading = None if fenced else _ATX.match(line)
        if fenced:
            document.add_paragraph(line)
        elif heading:
            flush()
            document.add_heading(heading[2], level=len(heading[1]))
        elif not line.strip():
            flush()
        else:
            paragraph.append(line.strip())
    flush()
    document.save(str(target))


# --- probes -----------------------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_WORD = re.compile(r"^[A-Za-z][A-Za-z'’-]*[,.;:!?)]?$")


def build_probes(name: str, seed: int = SEED) -> list[dict]:
    """The probe set of folder ``name`` made afresh (``probes`` reads the stored one)."""
    root = folder(name)
    places = _places(root)
    flat = {key: _norm(text) for key, text in places.items()}
    rng = random.Random(f"{seed}:{name}")
    pdfs = sorted({file for file, page in places if page is not None})
    others = sorted({file for file, page in places if page is None})
    rng.shuffle(others)
    candidates = {file: [(key, query) for key in sorted(places, key=lambda k: (k[0], k[1] or 0)) if key[0] == file
                         for query in _queries(places[key], paged=key[1] is not None) if _only_in(query, key, flat)]
                  for file in pdfs + others}
    wanted = [file for file in pdfs for _ in range(PDF_PROBES_PER_FILE)] + others * PROBES_PER_FOLDER
    chosen: list[dict] = []
    for file in wanted:
        left = [c for c in candidates[file] if all(c[1] != row["query"] for row in chosen)]
        if not left:  # an index page of links has no sentence to ask; a short page has few
            continue
        if len(chosen) == PROBES_PER_FOLDER:
            break
        (path, page), query = rng.choice(left)
        probe_id = f"{name}-{len(chosen):02d}"
        chosen.append({"id": probe_id, "query": query, "file": path, "page": page, "half": half(probe_id, seed)})
    return chosen


def _places(root: Path) -> dict[tuple[str, int | None], str]:
    """(file, page) -> text, as tanglerag's loaders read the folder (a page for PDFs, the whole file otherwise)."""
    from tanglerag.ingest import file_document
    from tanglerag.loaders.folder import folder_files

    places: dict[tuple[str, int | None], str] = {}
    for path in folder_files(root):
        relative = path.relative_to(root).as_posix()
        document = file_document(relative, path.read_bytes(), doc_id=relative)
        for segment in document.segments:
            key = (relative, segment.page)
            places[key] = (places.get(key, "") + "\n" + segment.text).strip()
    return places


def _queries(text: str, *, paged: bool) -> list[str]:
    """The text's qualifying sentences, each cut as a query: the first word dropped, at most 14 words kept. A
    sentence never crosses a blank line (a heading's end) except on a PDF page, whose lines are the layout's."""
    found = []
    for block in [text] if paged else text.split("\n\n"):
        for sentence in _SENTENCE_END.split(_norm(block)):
            words = sentence.split()
            if 12 <= len(words) <= 40 and _prose(words):
                found.append(" ".join(words[1:15]).rstrip(",.;:!?"))
    return found


def _prose(words: list[str]) -> bool:
    """Words a person would type: nine in ten plain words, none glued to the next (PDF text can lose spaces), not a
    page's running head in capitals."""
    return (sum(bool(_WORD.match(w)) for w in words) >= 0.9 * len(words) and max(map(len, words)) <= 20
            and sum(w.isupper() and len(w) > 1 for w in words) <= 2)


def _only_in(query: str, key: tuple[str, int | None], flat: dict[tuple[str, int | None], str]) -> bool:
    return query in flat[key] and not any(query in text for other, text in flat.items() if other != key)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _write(name: str, rows: list[dict]) -> Path:
    path = DATA / f"doc_probes_{name}.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build the folders").add_argument("names", nargs="*", default=list(NAMES))
    sub.add_parser("probes", help="make the probe sets").add_argument("--write", action="store_true")
    sub.add_parser("check", help="rebuild the probe sets and compare them with the stored ones")
    args = parser.parse_args()
    if args.command == "build":
        for name in args.names:
            print(name, folder(name), sum(1 for p in folder(name).rglob("*") if p.is_file() and
                                          not p.name.startswith(".")), "files")
        return
    for name in NAMES:
        rows = build_probes(name)
        if args.command == "check":
            same = rows == probes(name)
            print(f"{name}: {len(rows)} probes, {'the same as' if same else 'DIFFERENT from'} the stored set")
        elif args.write:
            print(f"{name}: {len(rows)} probes written to {_write(name, rows).relative_to(ROOT)}")
        else:
            print("\n".join(json.dumps(row, ensure_ascii=False) for row in rows))


if __name__ == "__main__":
    main()
