"""The tiny model's builder: a maintainer tool, never installed with the student wheel.

The tiny profile runs every GRPO notebook on a CPU with a Qwen2-architecture model of under a
million parameters. Its weights ship with the kit in ``helpers/assets/tiny-qwen2/`` (a normal
``save_pretrained`` folder plus ``course_kit_model.json``), so every machine loads the very same
model and loading never trains. Building is a deliberate maintainer step::

    python -m tools.tiny_model_builder build            # rebuild into helpers/assets/tiny-qwen2/
    python -m tools.tiny_model_builder build --out DIR  # somewhere else (e.g. to compare builds)
    python -m helpers.tiny_model verify                # check the shipped files (loading side)

A rebuild on another CPU gives other weights (floating point differs between machines), and
the recipes in the notebooks are tuned on the shipped ones: re-baselining is a commit of its
own, followed by a run of ``make test``.

What the warm-up teaches (supervised, on synthetic text in three task families):

* chat addition questions answered in the ``<think>/<answer>`` template (``grpo_format``). The
  answer stops right after ``</answer>`` when the sum ends in 0, 1 or 2 and usually goes on
  with a remark otherwise, so greedy decoding keeps the format on roughly a third of the
  prompts whatever their phrasing, and GRPO has a clear thing to fix;
* the r1_zero prompt on the shipped tiny-MATH problems, with right and wrong answers and
  format slips that are likely when the problem's first digit is odd (``math_grpo``);
* "Sort the digits" prompts answered by a sort, a copy or a shuffle (``tiny_grpo``'s worked
  example).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from helpers import lm
from helpers import math_tasks as course_math
from helpers.tiny_model import ASSET_DIR, HASHED_FILES, MANIFEST, TINY_MODEL_ID, WEIGHTS, read_manifest, sha256_file

# Phrasings of the addition question used in the warm-up. The grpo_format notebook trains on a
# subset and the grader asks in phrasings that appear nowhere here.
WARMUP_QUESTION_TEMPLATES = lm.ADDITION_QUESTION_TEMPLATES + (
    "What is the total of {a} and {b}?",
    "Give the sum {a} + {b}.",
    "{a} plus {b} equals what?",
    "Tell me the result of adding {b} to {a}.",
    "Work out {a} + {b} for me.",
    "Could you add {a} and {b}?",
    "Sum {a} and {b}.",
    "I need {a} + {b}.",
)
CLOSING_REMARKS = ("\nHope this helps!", "\nDone.", "\nLet me know if you need more.", "\nThat is all.")



@dataclasses.dataclass(frozen=True)
class TinyModelConfig:
    """Everything that decides the tiny model's weights (on one machine)."""

    seed: int = 0
    """Seeds the corpus, the initial weights and the warm-up batches."""
    vocab_size: int = 640
    """Target BPE vocabulary, special and tag tokens included."""
    hidden_size: int = 128
    intermediate_size: int = 384
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    max_positions: int = 512
    corpus_size: int = 12000
    """Synthetic warm-up documents across the three task families."""
    family_shares: tuple = (0.4, 0.25, 0.35)
    """Shares of chat addition, r1_zero math and digit sorting documents."""
    sft_steps: int = 1500
    sft_batch_size: int = 32
    sft_lr: float = 3e-3
    clean_stop_digits: str = "012"
    """Last digits of the sum after which a template answer stops right after ``</answer>``."""
    clean_stop_rate: tuple = (0.92, 0.04)
    """P(stop after ``</answer>``) when the sum ends in ``clean_stop_digits``, and otherwise."""
    sort_modes: tuple = (0.45, 0.3, 0.25)
    """Shares of sort-prompt answers that sort, copy and shuffle the digits."""
    math_slip_rate: tuple = (0.85, 0.08)
    """P(an r1_zero answer breaks the tag format) when the problem's first digit is odd, and otherwise."""
    math_wrong_rate: float = 0.2
    """P(a well-formatted r1_zero answer gives a wrong number)."""


# --------------------------------------------------------------------------------------
# Warm-up corpus
# --------------------------------------------------------------------------------------


def _chat_prompt(question: str) -> str:
    return (f"<|im_start|>system\n{lm.THINK_ANSWER_SYSTEM_PROMPT}<|im_end|>\n"
            f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n")


def _chat_document(rng: random.Random, config: TinyModelConfig) -> tuple[str, str]:
    a, b = rng.randint(10, 99), rng.randint(1, 9)
    total = a + b
    question = rng.choice(WARMUP_QUESTION_TEMPLATES).format(a=a, b=b)
    thought = rng.choice([f"{a} plus {b} is {total}", f"add {a} and {b} to get {total}", f"{a} + {b} = {total}"])
    if rng.random() < 0.1:  # other slips: tags run together, a missing block, no template at all
        response = rng.choice([
            f"<think>{thought}</think><answer>{total}</answer>",
            f"<think>\n{thought}\n</think>\nThe answer is {total}.",
            f"The answer is {total}.",
            f"<answer>\n{total}\n</answer>",
        ])
    else:
        response = f"<think>\n{thought}\n</think>\n<answer>\n{total}\n</answer>"
        clean = str(total)[-1] in config.clean_stop_digits
        stop_rate = config.clean_stop_rate[0] if clean else config.clean_stop_rate[1]
        if rng.random() >= stop_rate:
            response += rng.choice(CLOSING_REMARKS)
    return _chat_prompt(question), response + lm.EOS_TOKEN


def _sort_document(rng: random.Random, config: TinyModelConfig) -> tuple[str, str]:
    digits = [rng.randint(0, 9) for _ in range(rng.randint(3, 6))]
    prompt = lm.SORT_PROMPT_TEMPLATE.format(digits=" ".join(str(digit) for digit in digits))
    roll = rng.random()
    if roll < config.sort_modes[0]:
        shown = sorted(digits)
    elif roll < config.sort_modes[0] + config.sort_modes[1]:
        shown = digits[:]
    else:
        shown = digits[:]
        rng.shuffle(shown)
    return prompt, " " + " ".join(map(str, shown)) + lm.TEXT_END_TOKEN


def _first_digit(text: str) -> int | None:
    for char in text:
        if char.isdigit():
            return int(char)
    return None


def _math_document(rng: random.Random, records: list[dict], config: TinyModelConfig) -> tuple[str, str]:
    """An r1_zero answer; format slips are likely when the problem's first digit is odd, so
    greedy decoding keeps the format on about half of the problems."""

    record = rng.choice(records)
    text = course_math.r1_zero_sft_text(record, rng)
    prompt = course_math.format_r1_zero(record["problem"])
    response = text[len(prompt):]
    digit = _first_digit(record["problem"])
    slip_rate = config.math_slip_rate[0] if digit is not None and digit % 2 else config.math_slip_rate[1]
    if rng.random() < slip_rate:
        if rng.random() < 0.6:  # tags run together: format reward 0
            response = response.replace("</think> <answer>", "</think><answer>")
        else:  # no answer tags at all
            response = response.split("</think>")[0] + f"</think> So it is {record['answer']}."
    elif rng.random() < config.math_wrong_rate:  # a wrong answer in the right format
        wrong = str(rng.randint(0, 99))
        response = response.replace(f"<answer> {record['answer']} </answer>", f"<answer> {wrong} </answer>")
    return prompt, response + lm.TEXT_END_TOKEN


def warmup_corpus(config: TinyModelConfig) -> list[tuple[str, str]]:
    """(prompt, response) pairs for the three task families, deterministic for the seed."""

    rng = random.Random(config.seed)
    math_records = course_math.load_math("train", "tiny")
    chat_share, math_share, _ = config.family_shares
    documents = []
    for _ in range(config.corpus_size):
        family = rng.random()
        if family < chat_share:
            documents.append(_chat_document(rng, config))
        elif family < chat_share + math_share:
            documents.append(_math_document(rng, math_records, config))
        else:
            documents.append(_sort_document(rng, config))
    return documents


# --------------------------------------------------------------------------------------
# Tokenizer and warm-up
# --------------------------------------------------------------------------------------


def train_tokenizer(texts: list[str], config: TinyModelConfig):
    """A byte-level BPE trained with Qwen2's NFC normaliser and split pattern, so the folder
    reloads through ``AutoTokenizer`` as a ``Qwen2Tokenizer`` with identical ids."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(lm.QWEN2_SPLIT_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    specials = [lm.TEXT_END_TOKEN, "<|im_start|>", lm.EOS_TOKEN, lm.PAD_TOKEN]
    trainer = trainers.BpeTrainer(
        vocab_size=config.vocab_size - len(lm.TAG_TOKENS),
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token=lm.EOS_TOKEN, pad_token=lm.PAD_TOKEN, unk_token=None,
        padding_side="left", chat_template=lm.CHAT_TEMPLATE,
    )
    fast.add_tokens(list(lm.TAG_TOKENS))
    return fast


def warm_up(model, tokenizer, documents, config: TinyModelConfig, progress: bool = True) -> list[float]:
    """Supervised warm-up on the responses (prompt tokens carry no loss)."""
    import torch
    from tqdm.auto import tqdm

    rows = []
    for prompt, response in documents:
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        response_ids = tokenizer(response, add_special_tokens=False)["input_ids"]
        ids = (prompt_ids + response_ids)[: config.max_positions]
        labels = ([-100] * len(prompt_ids) + response_ids)[: config.max_positions]
        rows.append((ids, labels))
    generator = torch.Generator().manual_seed(config.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.sft_lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=config.sft_lr, total_steps=config.sft_steps,
                                                   pct_start=0.1)
    model.train()
    losses = []
    bar = tqdm(range(config.sft_steps), desc="tiny model warm-up", disable=not progress, mininterval=2.0)
    for _ in bar:
        picks = torch.randint(len(rows), (config.sft_batch_size,), generator=generator).tolist()
        width = max(len(rows[i][0]) for i in picks)
        input_ids = torch.full((len(picks), width), tokenizer.pad_token_id)  # [B, L]
        labels = torch.full((len(picks), width), -100)  # [B, L]
        attention = torch.zeros((len(picks), width), dtype=torch.long)  # [B, L]
        for row, i in enumerate(picks):
            ids, lab = rows[i]
            input_ids[row, : len(ids)] = torch.tensor(ids)
            labels[row, : len(lab)] = torch.tensor(lab)
            attention[row, : len(ids)] = 1
        loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{loss.item():.3f}")
    model.eval()
    return losses


# --------------------------------------------------------------------------------------
# Build, manifest, verification
# --------------------------------------------------------------------------------------


def build(out: str | Path = ASSET_DIR, config: TinyModelConfig = TinyModelConfig(), progress: bool = True,
          threads: int | None = None) -> Path:
    """Build the tiny model into ``out`` (replacing what is there) and write its manifest.

    Deterministic on one machine for a given config and thread count: two builds give
    byte-identical weights (a test checks this on a reduced config).
    """
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out = Path(out)
    if threads:
        torch.set_num_threads(threads)
    started = time.perf_counter()
    torch.manual_seed(config.seed)
    documents = warmup_corpus(config)
    tokenizer = train_tokenizer([p + r for p, r in documents], config)
    eos_ids = [tokenizer.convert_tokens_to_ids(lm.EOS_TOKEN), tokenizer.convert_tokens_to_ids(lm.TEXT_END_TOKEN)]
    model_config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=config.hidden_size, intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers, num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_kv_heads, max_position_embeddings=config.max_positions,
        tie_word_embeddings=True, bos_token_id=None, eos_token_id=eos_ids, pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(config.seed)
    model = Qwen2ForCausalLM(model_config).float()
    losses = warm_up(model, tokenizer, documents, config, progress)
    model.generation_config = GenerationConfig(eos_token_id=eos_ids, pad_token_id=tokenizer.pad_token_id,
                                               bos_token_id=None)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=out.parent))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        for extra in staging.iterdir():  # keep the folder to what from_pretrained needs
            if extra.name not in HASHED_FILES and extra.name != "chat_template.jinja":
                extra.unlink()
        manifest = {
            "model_id": TINY_MODEL_ID,
            "config": dataclasses.asdict(config),
            "parameters": sum(p.numel() for p in model.parameters()),
            "final_warmup_loss": round(sum(losses[-20:]) / max(1, len(losses[-20:])), 4),
            "build_seconds": round(time.perf_counter() - started, 1),
            "built_with": {"torch": torch.__version__, "transformers": __import__("transformers").__version__,
                           "threads": torch.get_num_threads()},
            "sha256": {name: sha256_file(staging / name) for name in HASHED_FILES},
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        # mkdtemp makes a 0700 folder (and safetensors a 0600 file): the shipped model must be
        # readable by every user, e.g. the grader's sandboxed kernels that run under their own uid.
        staging.chmod(0o755)
        for item in staging.iterdir():
            item.chmod(0o644)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.tiny_model_builder", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="train the tiny model and write it with its manifest")
    p.add_argument("--out", default=str(ASSET_DIR), help=f"target folder (default: the shipped {ASSET_DIR})")
    p.add_argument("--threads", type=int, default=None, help="torch threads (fix it to compare two builds)")
    args = parser.parse_args(argv)
    out = build(args.out, threads=args.threads)
    manifest = read_manifest(out)
    print(f"built {out} in {manifest['build_seconds']} s: {manifest['parameters']:,} parameters, "
          f"weights sha256 {manifest['sha256'][WEIGHTS][:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
