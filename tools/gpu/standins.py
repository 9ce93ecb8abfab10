"""Random-weight stand-ins for the hub models the full profile loads, written as an offline hub cache.

    HF_HOME=/tmp/hf python tools/gpu/standins.py [--scale 1.0] [REPO_ID ...]

A GPU machine without internet cannot download Qwen2.5-0.5B-Instruct, Qwen2.5-Math-1.5B or
SmolLM2-135M-Instruct. This writes models with their real configurations (layers, widths,
heads, vocabulary) and random weights into ``$HF_HOME/hub`` exactly where
``from_pretrained(repo_id)`` looks with ``HF_HUB_OFFLINE=1``. The tokenizer is the shipped tiny
model's (ids beyond its vocabulary decode to ''), so generations are gibberish that rarely
hits an end-of-sequence token: they run to ``max_new_tokens``, an upper bound on time.

Nothing learns on random weights: use them for loading (4-bit or not), LoRA, sampling, the
update, saving and reloading adapters, the hidden tests' mechanics, and timings.
``--scale 0.1`` shrinks every width and depth (same architecture) for a dry run on a CPU.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

# The architectures of the hub models the notebooks name (from their config.json files).
QWEN_05B = dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1e6,
                rms_norm_eps=1e-6, tie_word_embeddings=True)
QWEN_MATH_15B = dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                     num_key_value_heads=2, vocab_size=151936, max_position_embeddings=4096, rope_theta=1e4,
                     rms_norm_eps=1e-6, tie_word_embeddings=True)
SMOLLM2_135M = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, vocab_size=49152, max_position_embeddings=8192, rope_theta=1e5,
                    rms_norm_eps=1e-5, tie_word_embeddings=True)
MODELS = {
    "Qwen/Qwen2.5-0.5B-Instruct": ("qwen2", QWEN_05B),
    "Qwen/Qwen2.5-Math-1.5B": ("qwen2", QWEN_MATH_15B),
    "HuggingFaceTB/SmolLM2-135M-Instruct": ("llama", SMOLLM2_135M),
}
SNAPSHOT = "0" * 40


def _scaled(config: dict, scale: float) -> dict:
    if scale >= 1.0:
        return dict(config)
    heads = max(1, round(config["num_attention_heads"] * scale))
    kv = max(1, min(heads, round(config["num_key_value_heads"] * scale)))
    while heads % kv:
        kv -= 1
    head_dim = max(8, config["hidden_size"] // config["num_attention_heads"])
    return dict(config, num_attention_heads=heads, num_key_value_heads=kv, hidden_size=heads * head_dim,
                intermediate_size=max(16, int(config["intermediate_size"] * scale)),
                num_hidden_layers=max(1, round(config["num_hidden_layers"] * scale)))


def write_standin(repo_id: str, hf_home: Path, scale: float = 1.0, device: str | None = None) -> Path:
    """Write one stand-in into ``hf_home/hub``; returns its snapshot folder."""
    import torch
    from transformers import (
        AutoTokenizer,
        GenerationConfig,
        LlamaConfig,
        LlamaForCausalLM,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    from helpers import tiny_model

    arch, config = MODELS[repo_id]
    tokenizer = AutoTokenizer.from_pretrained(tiny_model.path())
    eos = [tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.convert_tokens_to_ids("<|endoftext|>")]
    config_class, model_class = (Qwen2Config, Qwen2ForCausalLM) if arch == "qwen2" else (LlamaConfig, LlamaForCausalLM)
    model_config = config_class(**_scaled(config, scale), eos_token_id=eos, pad_token_id=tokenizer.pad_token_id,
                                bos_token_id=None)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    with torch.device(device):
        torch.manual_seed(0)
        model = model_class(model_config).to(dtype)
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    root = Path(hf_home) / "hub" / ("models--" + repo_id.replace("/", "--"))
    snapshot = root / "snapshots" / SNAPSHOT
    if snapshot.exists():
        shutil.rmtree(snapshot)
    snapshot.mkdir(parents=True)
    model.save_pretrained(snapshot)
    tokenizer.save_pretrained(snapshot)
    (root / "refs").mkdir(exist_ok=True)
    (root / "refs" / "main").write_text(SNAPSHOT)
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    return snapshot


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="*", default=list(MODELS), help=f"default: {', '.join(MODELS)}")
    parser.add_argument("--scale", type=float, default=1.0, help="shrink widths and depths (CPU dry runs)")
    args = parser.parse_args(argv)
    hf_home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    for repo in args.repos:
        started = time.perf_counter()
        snapshot = write_standin(repo, hf_home, args.scale)
        print(f"stand-in {repo} -> {snapshot} ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
