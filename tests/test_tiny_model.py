"""The shipped tiny model: loading verifies and never trains; the builder is deterministic."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from helpers import lm, tiny_model
from tools import tiny_model_builder


def test_resolving_the_tiny_model_builds_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_KIT_CACHE", str(tmp_path / "cache"))  # an empty cache changes nothing
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    tiny_model._verified.clear()
    folder = lm.resolve_model("tiny", "Qwen/Qwen2.5-0.5B-Instruct")
    assert folder == str(tiny_model.ASSET_DIR)
    assert not (tmp_path / "cache").exists() and not (tmp_path / "hf").exists()
    manifest = tiny_model.read_manifest()
    assert 500_000 <= manifest["parameters"] <= 3_000_000
    assert set(manifest["sha256"]) == set(tiny_model.HASHED_FILES)
    assert tiny_model.identity() == f"course-kit/tiny-qwen2@sha256:{manifest['sha256']['model.safetensors'][:16]}"


def test_a_changed_weights_file_is_one_line_saying_how_to_restore(tmp_path):
    copy = tmp_path / "tiny-qwen2"
    shutil.copytree(tiny_model.ASSET_DIR, copy)
    weights = copy / tiny_model.WEIGHTS
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(tiny_model.TinyModelError) as info:
        tiny_model.verify(copy)
    message = str(info.value)
    assert "does not match its manifest" in message and "git checkout -- helpers/assets/tiny-qwen2" in message
    assert "\n" not in message
    weights.unlink()
    with pytest.raises(tiny_model.TinyModelError, match="is missing"):
        tiny_model.verify(copy)


def test_verify_command_reports_the_shipped_model():
    run = subprocess.run([sys.executable, "-m", "helpers.tiny_model", "verify"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "matches its manifest" in run.stdout and "sha256:" in run.stdout


def test_two_builds_on_one_machine_are_identical(tmp_path):
    """Same config, same machine, same thread count: byte-identical weights and tokenizer.

    A reduced config keeps this to seconds; the full build runs the same code for longer.
    """
    config = tiny_model_builder.TinyModelConfig(corpus_size=200, sft_steps=3, sft_batch_size=4, hidden_size=32,
                                        intermediate_size=64, num_layers=1, num_heads=2, num_kv_heads=1)
    first = tiny_model_builder.build(tmp_path / "a", config, progress=False, threads=1)
    second = tiny_model_builder.build(tmp_path / "b", config, progress=False, threads=1)
    one, two = tiny_model.read_manifest(first), tiny_model.read_manifest(second)
    assert one["sha256"] == two["sha256"]
    tiny_model._verified.clear()
    assert tiny_model.verify(first) == one["sha256"]["model.safetensors"]
    assert json.loads((first / "config.json").read_text())["num_hidden_layers"] == 1
    # what the builder writes loads like any hub checkpoint
    tokenizer = lm.load_tokenizer(str(first))
    model = lm.load_model(str(first))
    assert type(tokenizer).__name__ == "Qwen2Tokenizer" and model.config.num_hidden_layers == 1
