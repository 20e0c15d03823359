"""`tanglerag serve` refuses unsafe or impossible start-ups with one line, before loading anything."""

from __future__ import annotations

from typer.testing import CliRunner

from tanglerag.cli import app

runner = CliRunner()


def test_no_keys_means_loopback_only(tmp_path, monkeypatch):
    monkeypatch.delenv("TANGLERAG_API_KEYS", raising=False)
    result = runner.invoke(app, ["serve", "--index", str(tmp_path / "idx"), "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "refusing to serve on 0.0.0.0 without API keys" in " ".join(result.output.split())


def test_short_keys_and_non_index_folders_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("TANGLERAG_API_KEYS", "short")
    result = runner.invoke(app, ["serve", "--index", str(tmp_path / "idx")])
    assert result.exit_code == 2 and "shorter than 16 characters" in " ".join(result.output.split())
    monkeypatch.delenv("TANGLERAG_API_KEYS")
    (tmp_path / "notes").mkdir()
    result = runner.invoke(app, ["serve", "--index", str(tmp_path / "notes")])
    assert result.exit_code == 2 and "is not a tanglerag index" in " ".join(result.output.split())
    result = runner.invoke(app, ["serve", "--index", str(tmp_path / "idx"), "--port", "70000"])
    assert result.exit_code == 2 and "service.port" in " ".join(result.output.split())


def test_a_runs_folder_must_exist(tmp_path, monkeypatch):
    monkeypatch.delenv("TANGLERAG_API_KEYS", raising=False)
    result = runner.invoke(app, ["serve", "--index", str(tmp_path / "idx"), "--runs", str(tmp_path / "none")])
    assert result.exit_code == 2 and "--runs" in result.output and "is not a folder" in " ".join(result.output.split())
