"""The small profile's model is the real SmolLM2-135M-Instruct, read from a PyPI wheel offline."""
from __future__ import annotations

import importlib.metadata
import json
import socket

import pytest

from helpers import lm, small_model


@pytest.fixture(scope="module")
def small_folder(tmp_path_factory):
    """One conversion for the module, into a cache of its own (about 20 s)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(small_model.CACHE_VARIABLE, str(tmp_path_factory.mktemp("kit-cache")))
        yield small_model.path()


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("this test runs with the network off")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_the_small_model_is_the_real_one(small_folder, no_network):
    tokenizer, model = lm.load_tokenizer(str(small_folder)), lm.load_model(str(small_folder))
    assert type(model).__name__ == "LlamaForCausalLM"
    assert sum(p.numel() for p in model.parameters()) == small_model.PARAMETERS
    chat = tokenizer.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}],
                                         add_generation_prompt=True, return_tensors="pt", return_dict=True)
    out = model.generate(**chat, max_new_tokens=12, do_sample=False)
    answer = tokenizer.decode(out[0, chat["input_ids"].shape[1]:], skip_special_tokens=True)
    assert answer.strip() == "The capital of France is Paris."
    assert lm.base_model_identity(model) == small_model.identity() != lm.tiny_model.identity()


def test_the_conversion_is_kept_and_checked(small_folder):
    manifest = json.loads((small_folder / small_model.MANIFEST).read_text())
    assert manifest["gguf_sha256"] == small_model.GGUF_SHA256 and manifest["parameters"] == small_model.PARAMETERS
    assert small_model.path() == small_folder  # ready: no second conversion
    assert small_model.verify(small_folder) == small_model.identity()
    assert lm.resolve_model("small", "Qwen/Qwen2.5-0.5B-Instruct") == str(small_folder)


def test_a_missing_wheel_is_one_line_naming_the_command(monkeypatch, tmp_path):
    monkeypatch.setenv(small_model.CACHE_VARIABLE, str(tmp_path))

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(small_model.SmallModelError) as info:
        small_model.path()
    message = str(info.value)
    assert "\n" not in message and small_model.INSTALL in message


def test_a_gguf_file_that_does_not_match_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv(small_model.CACHE_VARIABLE, str(tmp_path))
    monkeypatch.setattr(small_model, "GGUF_SHA256", "0" * 64)
    with pytest.raises(small_model.SmallModelError, match="does not match its known sha256"):
        small_model.path()
    assert not any(tmp_path.rglob("*.safetensors"))


def test_worked_examples_only_in_the_small_profile():
    plain = lm.think_answer_messages("What is 3 plus 4?", "tiny")
    shown = lm.think_answer_messages("What is 3 plus 4?", "small")
    assert [m["role"] for m in plain] == ["system", "user"]
    assert [m["role"] for m in shown] == ["system"] + ["user", "assistant"] * len(lm.WORKED_EXAMPLES) + ["user"]
    assert all(m["content"].startswith("<think>\n") for m in shown if m["role"] == "assistant")
    assert shown[-1] == plain[-1]
