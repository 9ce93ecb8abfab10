"""grpo_format: held-out format adherence of the student's LoRA adapter, measured by the grader.

Contract (also in docs/GRADING.md)
----------------------------------
Declared in ``autograder/samples/grpo_format.json``::

    "evaluator": {"name": "grpo_format", "artifact": "artifacts/grpo_format_adapter",
                  "tiers": {"full": {"test_adherence_50": 0.5, "test_adherence_70": 0.7, "test_adherence_90": 0.9},
                            "tiny": {"test_adherence_50": 0.3, "test_adherence_70": 0.4, "test_adherence_90": 0.5}}}

What is measured, once per submission, outside the student's kernel (in a sandboxed evaluator
process that keeps the base model loaded across submissions):

- the base model ``helpers.lm.resolve_model(profile, "Qwen/Qwen2.5-0.5B-Instruct")`` loaded with
  ``helpers.lm.load_model`` (4-bit NF4 on CUDA, float32 on CPU, as the notebook trains it);
- the submitted ``artifacts/grpo_format_adapter`` attached with ``helpers.lm.load_adapter``, which
  refuses an adapter trained on other base weights (its manifest names them); only
  ``adapter_model.safetensors`` weights are accepted;
- 60 held-out prompts: the chat template with ``helpers.lm.THINK_ANSWER_SYSTEM_PROMPT`` and a
  question ``PHRASINGS[i % 6].format(a, b)`` with ``a, b = rng.randint(10, 99), rng.randint(1, 9)``
  from ``random.Random(20250611)`` (phrasings the notebook never trains on);
- greedy decoding with ``helpers.grpo.sample_completions`` in batches of 32, ``max_new_tokens``
  48 (tiny) / 128 (full); a completion adheres when ``TEMPLATE.fullmatch(text.strip())``.

What the grader does with it:

- the kernel's environment gets ``AUTOGRADER_MEASUREMENTS``, a JSON object whose ``"grpo_format"``
  entry is ``{"metric": "heldout_format_adherence", "rate": 0.5667, "hits": 34, "total": 60,
  "max_new_tokens": 48, "profile": "tiny", "base_model": "...", "error": null, "seconds": 1.9,
  "thresholds": {"test_adherence_50": 0.3, "test_adherence_70": 0.4, "test_adherence_90": 0.5}}``
  (``thresholds``: the tiers of the profile grading runs in)
  (``rate`` is null and ``error`` a sentence when the adapter is missing or unusable). The tier
  cells only *print* it, e.g.::

      import json, os
      measured = json.loads(os.environ.get("AUTOGRADER_MEASUREMENTS") or "{}").get("grpo_format")
      if measured is None:
          print("held-out adherence is measured by the grader when it grades your submission")
      elif measured["error"]:
          print("the grader could not measure held-out adherence:", measured["error"])
      else:
          print(f"held-out format adherence measured by the grader: {measured['rate']:.0%}")

- each tier cell scores its points exactly when ``rate >= threshold`` (the thresholds of the profile
  grading runs in: the handout's 0.5 / 0.7 / 0.9 in full, a smoke-test 0.3 / 0.4 / 0.5 in tiny), whatever
  the kernel did in that cell (an error, a print, a patched comparison); one feedback line gives
  the measured rate and the tiers earned.
"""
from __future__ import annotations

import random
import re
from pathlib import Path

MODEL_ID = "Qwen/Qwen2.5-0.5B-Instruct"
PHRASINGS = ("How much is {a} plus {b}?", "Calculate {a} + {b}.", "Find the sum of {a} and {b}.",
             "What do you get when you add {b} to {a}?", "Add {a} and {b}. What is the total?",
             "Please work out {a} + {b}.")
SEED = 20250611
PROMPTS = 60
BATCH = 32
MAX_NEW_TOKENS = {"tiny": 48, "full": 128}
BODY = r"(?:(?!</?(?:think|answer)>)[\s\S])*"  # any text without a tag in it
TEMPLATE = re.compile("<think>\n" + BODY + "\n</think>\n<answer>\n" + BODY + "\n</answer>")


def questions() -> list[str]:
    rng = random.Random(SEED)
    found = []
    for i in range(PROMPTS):
        a, b = rng.randint(10, 99), rng.randint(1, 9)
        found.append(PHRASINGS[i % len(PHRASINGS)].format(a=a, b=b))
    return found


def adheres(text: str) -> bool:
    return TEMPLATE.fullmatch(text.strip()) is not None


class Evaluator:
    """Loads the base model once; :meth:`measure` attaches one adapter, decodes, detaches it."""

    metric = "heldout_format_adherence"

    def __init__(self, profile: str):
        from helpers import lm

        self.profile = profile
        self.name = lm.resolve_model(profile, MODEL_ID)
        self.base_model = lm.base_model_identity(self.name)
        self.tokenizer = lm.load_tokenizer(self.name)
        self.base = lm.load_model(self.name)
        self.base.eval()
        self.prompts = [self.tokenizer.apply_chat_template(
            [{"role": "system", "content": lm.THINK_ANSWER_SYSTEM_PROMPT}, {"role": "user", "content": q}],
            tokenize=False, add_generation_prompt=True) for q in questions()]
        self.max_new_tokens = MAX_NEW_TOKENS.get(profile, 128)

    def describe(self) -> dict:
        return {"metric": self.metric, "profile": self.profile, "base_model": self.base_model,
                "max_new_tokens": self.max_new_tokens, "total": len(self.prompts)}

    def measure(self, adapter: Path) -> dict:
        import torch
        from helpers import grpo, lm

        result = {**self.describe(), "rate": None, "hits": None, "error": None}
        adapter = Path(adapter)
        if not (adapter / "adapter_model.safetensors").is_file():
            result["error"] = ("artifacts/grpo_format_adapter has no adapter_model.safetensors: save the adapter "
                               "with helpers.lm.save_adapter and submit that folder")
            return result
        try:
            policy = lm.load_adapter(self.base, adapter)
        except lm.AdapterError as error:
            result["error"] = str(error).replace(str(adapter), "artifacts/grpo_format_adapter")
            return result
        try:
            policy.eval()
            hits = 0
            with torch.no_grad():
                for start in range(0, len(self.prompts), BATCH):
                    rollout = grpo.sample_completions(policy, self.tokenizer, self.prompts[start:start + BATCH], 1,
                                                      self.max_new_tokens, do_sample=False)
                    hits += sum(1 for text in rollout.completions if adheres(text))
        finally:
            self.base = policy.unload()  # the same base weights, without this adapter, for the next one
            self.base.eval()
        result.update(rate=hits / len(self.prompts), hits=hits)
        return result
