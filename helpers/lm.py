"""Language models for the GRPO notebooks: one loading path for both profiles.

* ``full``: a hub id (e.g. ``Qwen/Qwen2.5-0.5B-Instruct``), 4-bit NF4 through bitsandbytes when
  CUDA is present, LoRA through peft. On a CPU the same id loads in float32 without
  quantization (4-bit on CPU breaks once generation and training alternate).
* ``tiny``: a Qwen2-architecture model of about a million parameters and a byte-level BPE
  tokenizer, built here in seconds, warmed up on synthetic text so it already emits the
  ``<think>/<answer>`` format some of the time, cached on disk keyed by its configuration and
  loaded with the very same ``from_pretrained`` call as a hub model.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from . import env

# --------------------------------------------------------------------------------------
# Prompts and task text the tiny model is warmed up on. The notebooks import these so the
# warm-up and the assignments cannot drift apart.
# --------------------------------------------------------------------------------------

THINK_ANSWER_SYSTEM_PROMPT = (
    "You are a helpful assistant. First reason internally, then provide the user answer. "
    "Respond using the template:\n"
    "<think>\n"
    "...\n"
    "</think>\n"
    "<answer>\n"
    "...\n"
    "</answer>"
)

ADDITION_QUESTION_TEMPLATES = (
    "If you add {a} and {b}, what is the result?",
    "What is {a} plus {b}?",
    "Compute {a} + {b}.",
)

SORT_PROMPT_TEMPLATE = "Sort the digits: {digits}\nSorted:"

TINY_MODEL_ID = "course-kit/tiny-qwen2"
PAD_TOKEN = "<|pad|>"
EOS_TOKEN = "<|im_end|>"
TEXT_END_TOKEN = "<|endoftext|>"
TAG_TOKENS = ("<think>", "</think>", "<answer>", "</answer>")

CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# Qwen2's pre-tokenizer split: AutoTokenizer re-applies it (and NFC) when it reloads a qwen2
# directory, so the tiny tokenizer is trained with the same rules or ids change on reload.
QWEN2_SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


class AdapterError(RuntimeError):
    """A LoRA adapter artifact is missing, unreadable, or belongs to another base model."""


@dataclasses.dataclass(frozen=True)
class TinyModelConfig:
    """Everything that decides the tiny model's weights; its hash names the cache folder."""

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
    corpus_size: int = 6000
    """Synthetic warm-up documents across the three task families."""
    sft_steps: int = 300
    sft_batch_size: int = 32
    sft_lr: float = 3e-3
    chat_format_share: float = 0.3
    """Share of template-shaped chat answers that stop right after ``</answer>``."""
    version: int = 1
    """Bump when the builder's code changes what it produces."""

    def key(self) -> str:
        blob = json.dumps(dataclasses.asdict(self), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


def cache_root() -> Path:
    root = os.environ.get("COURSE_KIT_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "course-kit"


# --------------------------------------------------------------------------------------
# Warm-up corpus
# --------------------------------------------------------------------------------------


def _chat_response(a: int, b: int, rng: random.Random, config: TinyModelConfig) -> str:
    """An answer in the template, or a near miss.

    Most near misses append a closing remark after ``</answer>``: whether to stop or go on
    after the answer is close to a coin flip for the warmed-up model, so greedy decoding keeps
    the format on some prompts and not others, and GRPO has something to fix.
    """
    total = a + b
    thought = rng.choice([f"{a} plus {b} is {total}", f"add {a} and {b} to get {total}", f"{a} + {b} = {total}"])
    core = f"<think>\n{thought}\n</think>\n<answer>\n{total}\n</answer>"
    if rng.random() < 0.15:
        return rng.choice([
            f"<think>{thought}</think><answer>{total}</answer>",
            f"<think>\n{thought}\n</think>\nThe answer is {total}.",
            f"The answer is {total}.",
            f"<answer>\n{total}\n</answer>",
        ])
    if rng.random() >= config.chat_format_share:
        core += rng.choice(["\nHope this helps!", "\nDone.", "\nLet me know if you need more."])
    return core


def _chat_document(rng: random.Random, config: TinyModelConfig) -> tuple[str, str]:
    a, b = rng.randint(10, 99), rng.randint(1, 9)
    question = rng.choice(ADDITION_QUESTION_TEMPLATES).format(a=a, b=b)
    prompt = (
        f"<|im_start|>system\n{THINK_ANSWER_SYSTEM_PROMPT}<|im_end|>\n"
        f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
    )
    return prompt, _chat_response(a, b, rng, config) + EOS_TOKEN


def _sort_document(rng: random.Random) -> tuple[str, str]:
    digits = [rng.randint(0, 9) for _ in range(rng.randint(3, 6))]
    prompt = SORT_PROMPT_TEMPLATE.format(digits=" ".join(map(str, digits)))
    roll = rng.random()
    if roll < 0.35:
        shown = sorted(digits)
    elif roll < 0.7:
        shown = digits[:]
    else:
        shown = digits[:]
        rng.shuffle(shown)
    return prompt, " " + " ".join(map(str, shown)) + TEXT_END_TOKEN


def _math_document(rng: random.Random, records: list[dict]) -> tuple[str, str]:
    from . import math as course_math

    record = rng.choice(records)
    text = course_math.r1_zero_sft_text(record, rng)
    prompt = course_math.format_r1_zero(record["problem"])
    response = text[len(prompt):]
    roll = rng.random()
    if roll < 0.25:  # a wrong answer in the right format
        wrong = str(rng.randint(0, 99))
        response = response.replace(f"<answer> {record['answer']} </answer>", f"<answer> {wrong} </answer>")
    elif roll < 0.45:  # tags run together: format reward 0
        response = response.replace("</think> <answer>", "</think><answer>")
    elif roll < 0.6:  # no answer tags at all
        response = response.split("</think>")[0] + f"</think> So it is {record['answer']}."
    return prompt, response + TEXT_END_TOKEN


def warmup_corpus(config: TinyModelConfig) -> list[tuple[str, str]]:
    """(prompt, response) pairs for the three task families, deterministic for the seed."""
    from . import math as course_math

    rng = random.Random(config.seed)
    math_records = course_math.load_math("train", "tiny")
    documents = []
    for _ in range(config.corpus_size):
        family = rng.random()
        if family < 0.4:
            documents.append(_chat_document(rng, config))
        elif family < 0.7:
            documents.append(_math_document(rng, math_records))
        else:
            documents.append(_sort_document(rng))
    return documents


# --------------------------------------------------------------------------------------
# Building the tiny model
# --------------------------------------------------------------------------------------


def _train_tokenizer(texts: list[str], config: TinyModelConfig):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    specials = [TEXT_END_TOKEN, "<|im_start|>", EOS_TOKEN, PAD_TOKEN]
    trainer = trainers.BpeTrainer(
        vocab_size=config.vocab_size - len(TAG_TOKENS),
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        unk_token=None,
        padding_side="left",
        chat_template=CHAT_TEMPLATE,
    )
    fast.add_tokens(list(TAG_TOKENS))
    return fast


def _warm_up(model, tokenizer, documents, config: TinyModelConfig, progress: bool) -> list[float]:
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
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=config.sft_lr, total_steps=config.sft_steps, pct_start=0.1
    )
    model.train()
    losses = []
    bar = tqdm(range(config.sft_steps), desc="tiny model warm-up", disable=not progress, leave=False, mininterval=2.0)
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


@contextlib.contextmanager
def _file_lock(path: Path):
    """Serialise builders across processes (parallel graders share one cache)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_tiny_model(
    config: TinyModelConfig = TinyModelConfig(),
    cache_dir: str | Path | None = None,
    force: bool = False,
    progress: bool = True,
) -> Path:
    """Build (or find in the cache) the tiny model and return its directory.

    The directory holds a normal ``save_pretrained`` model and tokenizer, so it loads with
    ``AutoModelForCausalLM.from_pretrained(path)`` like any hub checkpoint.
    """
    root = Path(cache_dir) if cache_dir else cache_root()
    target = root / f"tiny-qwen2-{config.key()}"
    marker = target / "course_kit_model.json"
    if marker.exists() and not force:
        return target
    with _file_lock(root / f".tiny-qwen2-{config.key()}.lock"):
        if marker.exists() and not force:
            return target
        import torch
        from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

        started = time.perf_counter()
        documents = warmup_corpus(config)
        tokenizer = _train_tokenizer([p + r for p, r in documents], config)
        eos_ids = [tokenizer.convert_tokens_to_ids(EOS_TOKEN), tokenizer.convert_tokens_to_ids(TEXT_END_TOKEN)]
        model_config = Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=config.hidden_size,
            intermediate_size=config.intermediate_size,
            num_hidden_layers=config.num_layers,
            num_attention_heads=config.num_heads,
            num_key_value_heads=config.num_kv_heads,
            max_position_embeddings=config.max_positions,
            tie_word_embeddings=True,
            bos_token_id=None,
            eos_token_id=eos_ids,
            pad_token_id=tokenizer.pad_token_id,
        )
        torch.manual_seed(config.seed)
        model = Qwen2ForCausalLM(model_config).float()
        losses = _warm_up(model, tokenizer, documents, config, progress)
        model.generation_config = GenerationConfig(
            eos_token_id=eos_ids, pad_token_id=tokenizer.pad_token_id, bos_token_id=None
        )
        staging = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        summary = {
            "model_id": TINY_MODEL_ID,
            "key": config.key(),
            "config": dataclasses.asdict(config),
            "parameters": sum(p.numel() for p in model.parameters()),
            "final_warmup_loss": sum(losses[-20:]) / max(1, len(losses[-20:])),
            "build_seconds": round(time.perf_counter() - started, 1),
        }
        (staging / "course_kit_model.json").write_text(json.dumps(summary, indent=2))
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
        return target


def tiny_model_info(path: str | Path) -> dict:
    return json.loads((Path(path) / "course_kit_model.json").read_text())


# --------------------------------------------------------------------------------------
# Loading (both profiles)
# --------------------------------------------------------------------------------------


def resolve_model(profile: str | None, full_model_id: str) -> str:
    """The ``from_pretrained`` target: the hub id in ``full``, the tiny model's folder in ``tiny``."""
    if env.get_profile(profile) == "full":
        return full_model_id
    return str(build_tiny_model())


def base_model_identity(model_or_path) -> str:
    """A name for the base weights that survives moving the cache between machines."""
    path = getattr(getattr(model_or_path, "config", None), "_name_or_path", model_or_path)
    marker = Path(str(path)) / "course_kit_model.json"
    if marker.exists():
        info = tiny_model_info(path)
        return f"{info['model_id']}@{info['key']}"
    return str(path)


def load_tokenizer(name_or_path: str):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path, padding_side="left")
    if tokenizer.pad_token_id is None:  # hub chat models often ship without one
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model(name_or_path: str, quantize_4bit: bool | None = None, device_map=None):
    """Load a causal LM the same way for a hub id and for the tiny model's folder.

    ``quantize_4bit=None`` means: 4-bit NF4 exactly when CUDA is present.
    """
    import torch
    from transformers import AutoModelForCausalLM

    cuda = torch.cuda.is_available()
    if quantize_4bit is None:
        quantize_4bit = cuda
    kwargs = {}
    if quantize_4bit:
        if not cuda:
            raise RuntimeError(
                "4-bit loading needs a CUDA GPU: bitsandbytes' CPU path breaks when generation "
                "and training alternate. Load without quantize_4bit on a CPU."
            )
        from transformers import BitsAndBytesConfig

        compute = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=compute
        )
        kwargs["dtype"] = compute
        kwargs["device_map"] = device_map or {"": 0}
    elif cuda:
        kwargs["dtype"] = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        kwargs["device_map"] = device_map or {"": 0}
    else:
        kwargs["dtype"] = torch.float32  # transformers 5 would otherwise follow the checkpoint
    model = AutoModelForCausalLM.from_pretrained(name_or_path, **kwargs)
    model.generation_config.pad_token_id = model.generation_config.pad_token_id or model.config.pad_token_id
    return model


def add_lora(model, r: int = 16, alpha: int = 32, dropout: float = 0.05, target_modules=None):
    """Wrap ``model`` with a fresh LoRA adapter (peft's default target modules for the arch)."""
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    if getattr(model, "is_loaded_in_4bit", False):
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    config = LoraConfig(
        r=r, lora_alpha=alpha, lora_dropout=dropout, bias="none", task_type="CAUSAL_LM",
        target_modules=target_modules,
    )
    return get_peft_model(model, config)


def load_policy(profile: str | None, full_model_id: str, lora: dict | None = None, adapter: str | Path | None = None):
    """Tokenizer and LoRA-wrapped policy for a notebook: fresh adapter, or a saved one."""
    name = resolve_model(profile, full_model_id)
    tokenizer = load_tokenizer(name)
    model = load_model(name)
    if adapter is not None:
        model = load_adapter(model, adapter)
    else:
        model = add_lora(model, **(lora or {}))
    return model, tokenizer


# --------------------------------------------------------------------------------------
# Adapters as submission artifacts
# --------------------------------------------------------------------------------------

ADAPTER_MANIFEST = "course_kit_adapter.json"


def save_adapter(model, path: str | Path, **extra) -> Path:
    """Save the LoRA weights plus a manifest naming the base model they were trained on."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    manifest = {"base_model": base_model_identity(model.get_base_model()), **extra}
    (path / ADAPTER_MANIFEST).write_text(json.dumps(manifest, indent=2))
    return path


def load_adapter(base_model, path: str | Path, is_trainable: bool = False):
    """Attach a saved adapter to ``base_model``; AdapterError says what is wrong, and what to do."""
    from peft import PeftModel

    path = Path(path)
    if not path.exists():
        raise AdapterError(
            f"adapter not found at {path}: run the training cells and keep the saved folder "
            "next to the notebook when you submit"
        )
    manifest_file = path / ADAPTER_MANIFEST
    if not (path / "adapter_config.json").exists() or not manifest_file.exists():
        raise AdapterError(
            f"{path} is not a saved adapter (adapter_config.json or {ADAPTER_MANIFEST} missing): "
            "save it with helpers.lm.save_adapter"
        )
    try:
        manifest = json.loads(manifest_file.read_text())
    except json.JSONDecodeError as error:
        raise AdapterError(f"{manifest_file} is corrupt ({error}); save the adapter again") from None
    expected = base_model_identity(base_model)
    if manifest.get("base_model") != expected:
        raise AdapterError(
            f"adapter at {path} was trained on {manifest.get('base_model')!r}, but this notebook's "
            f"base model is {expected!r}: train it again with this notebook's model"
        )
    try:
        return PeftModel.from_pretrained(base_model, path, is_trainable=is_trainable)
    except Exception as error:  # peft raises several types for unreadable weights
        raise AdapterError(f"adapter at {path} could not be loaded ({type(error).__name__}: {error})") from None
