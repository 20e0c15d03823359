"""The factory imports a backend only when it is configured: the openai SDK's types cost about a second of every
command's start, and the default embedded backend never needs them."""

import subprocess
import sys

from tanglerag.config import LLMConfig
from tanglerag.llm.factory import build_backend
from tanglerag.llm.openai_compat import OpenAICompatBackend


def test_the_command_line_starts_without_importing_the_openai_sdk():
    code = "import sys, tanglerag.cli; print(sorted(m for m in sys.modules if m == 'openai' or m.startswith('openai.'))[:3])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_the_openai_backend_is_built_when_configured(tmp_path):
    backend = build_backend(LLMConfig(backend="openai", base_url="http://127.0.0.1:9/v1", model="m"), tmp_path)
    assert isinstance(backend, OpenAICompatBackend)
