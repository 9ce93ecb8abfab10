"""grpo_format: held-out format adherence of the student's LoRA adapter, measured by the grader.

Contract (also in docs/GRADING.md)
----------------------------------
Declared in ``solutions/grpo_format/manifest.json`` (``evaluator``: its artifact, and the tier
thresholds per profile -- the manifest is the only place they are written down).

What is measured, once per submission, outside the student's kernel (in a sandboxed evaluator
process that keeps the base model loaded across submissions, checked unchanged after each one):

- the base model ``helpers.lm.resolve_model(profile, "Qwen/Qwen2.5-0.5B-Instruct")`` loaded with
  ``helpers.lm.load_model`` (4-bit NF4 on CUDA, float32 on CPU, as the notebook trains it);
- the submitted ``artifacts/grpo_format_adapter``, accepted only under the manifest's ``adapters``
  rules (``autograder.evaluators.adapters``: plain LoRA, rank cap, target modules, safetensors,
  finite values) and when its ``course_kit_adapter.json`` names this profile's base model;
  attached with a clean config built by the grader (never the file's own options);
- 60 held-out prompts: the chat template of ``helpers.lm.think_answer_messages`` (the system prompt,
  the small profile's worked examples) and a question ``PHRASINGS[i % 6].format(a, b)`` with
  ``a, b = rng.randint(10, 99), rng.randint(1, 9)`` from ``random.Random(20250611)`` (phrasings the
  notebook never trains on);
- greedy decoding with ``helpers.grpo``'s own rollout code in batches of 32 prompts, ``max_new_tokens``
  from ``MAX_NEW_TOKENS`` below; a completion adheres when ``TEMPLATE.fullmatch(text.strip())``.
  Several submissions' adapters may be decoded together (:meth:`Evaluator.measure_many`, up to
  ``GROUP_SIZES`` in ``autograder.evaluators``): each batch then holds the 32 prompts once per
  adapter, and each row runs through its own adapter only, so every adapter gets its own rate. On
  a GPU every decode has a full group's rows (:func:`decode_slots`), alone or not.

What the grader does with it:

- each tier cell scores its points exactly when ``rate >= threshold`` (the thresholds of the
  profile grading runs in), whatever the kernel did in that cell; one feedback line gives the
  measured rate and the tiers earned;
- the measurement (``rate``, ``hits``, ``total``, ``error``, ``profile``, ``thresholds``...) never
  enters the kernel: the grader's executor hands it to the tier cells' judge (``check.measurement``
  of ``solutions/grpo_format/tests/test_adherence.py``, ``MEASURED_BY``), and no probe runs there.
  Without the kit's grader (plain nbgrader) the hidden test's ``measure_here`` measures the adapter
  in the notebook's process. No environment variable or notebook variable is ever read.
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
MAX_NEW_TOKENS = {"tiny": 48, "small": 48, "full": 128}
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


def decode_slots(device_type: str) -> int:
    """Adapters' worth of rows in every decode: a full group's on a GPU, whatever the group holds.

    A GPU's matrix kernels may round a row differently when the batch's shape changes, which can
    flip a greedy token; padding every decode to one shape (rows without an adapter fill the free
    slots) makes an adapter's rate depend on its own bytes only, alone or beside anyone. A CPU
    gives each row the same numbers at any batch size (tested), and pays for every padded row."""
    from autograder.evaluators import GROUP_SIZES

    return GROUP_SIZES["grpo_format"] if device_type == "cuda" else 1


class Evaluator:
    """Keeps the base model loaded (:class:`~autograder.evaluators.shared_base.SharedBase`);
    :meth:`measure` checks one adapter against the assignment's rules, attaches it with a clean
    config, decodes, detaches it and makes sure the base is unchanged for the next submission."""

    metric = "heldout_format_adherence"

    def __init__(self, profile: str):
        from autograder.evaluators.shared_base import SharedBase
        from helpers import lm

        self.profile = profile
        self.name = lm.resolve_model(profile, MODEL_ID)
        self.tokenizer = lm.load_tokenizer(self.name)
        self.shared = SharedBase(lambda: lm.load_model(self.name))
        self.base_model = lm.base_model_identity(self.shared.model)
        self.prompts = [self.tokenizer.apply_chat_template(lm.think_answer_messages(q, profile), tokenize=False,
                                                           add_generation_prompt=True) for q in questions()]
        self.max_new_tokens = MAX_NEW_TOKENS.get(profile, 128)
        self.slots = decode_slots(next(self.shared.model.parameters()).device.type)

    def describe(self) -> dict:
        return {"metric": self.metric, "profile": self.profile, "base_model": self.base_model,
                "max_new_tokens": self.max_new_tokens, "total": len(self.prompts)}

    def measure(self, adapter: Path, rules=None) -> dict:
        return self.measure_many([adapter], rules)[0]

    def measure_many(self, adapters: list[Path], rules=None) -> list[dict]:
        """One measurement per adapter, decoded together: each batch of prompts is repeated once per
        admitted adapter and every row runs through its own adapter only (peft's mixed-adapter
        batch), so a GPU fills its batch with many students' rows at once. A refused adapter, or one
        that fails to load, gets its own error; when the group as a whole failed, or the base was not
        intact after it, every adapter gets an error: the grader then measures each of them alone."""
        import torch

        from autograder.evaluators.adapters import attach_all
        from autograder.manifest import AdapterRules

        rules = rules or AdapterRules(max_rank=64, target_modules=("q_proj", "v_proj"), max_mb=64)
        results = [{**self.describe(), "rate": None, "hits": None, "error": None, "group": len(adapters)}
                   for _ in adapters]
        policy = None
        try:
            policy, problems = attach_all(self.shared.model, [Path(a) for a in adapters], rules, self.base_model)
            for result, problem in zip(results, problems, strict=True):
                result["error"] = problem
            admitted = [i for i, problem in enumerate(problems) if problem is None]
            if admitted:
                policy.eval()
                with torch.no_grad():
                    hits = self._hits(policy, admitted)
                for i in admitted:
                    results[i].update(rate=hits[i] / len(self.prompts), hits=hits[i])
        except Exception as error:  # noqa: BLE001 - unreadable weights, a half-made adapter: measured alone later
            for result in results:
                result.update(rate=None, hits=None, error=f"the adapter could not be loaded ({type(error).__name__}: "
                                                          f"{str(error)[:200]})")
        finally:
            reloaded = self.shared.release(policy)
        for result in results:
            result["base_reloaded"] = reloaded
            if reloaded and len(adapters) > 1 and result["error"] is None:
                result.update(rate=None, hits=None, error="the base model changed while this group was measured")
        return results

    def _hits(self, policy, admitted: list[int]) -> dict[int, int]:
        """Adhering greedy completions per admitted adapter (by its place in the group)."""
        from helpers import grpo

        hits = dict.fromkeys(admitted, 0)
        eos = grpo.eos_token_ids(policy, self.tokenizer)
        names = [f"s{i}" for i in admitted]
        names += ["__base__"] * (self.slots - len(names))  # peft's name for rows without an adapter
        for start in range(0, len(self.prompts), BATCH):
            chunk = self.prompts[start:start + BATCH]
            rows = [name for name in names for _ in chunk]  # adapter of each row, adapter by adapter
            # helpers' own decoding, minus its shared-prefix prefill, which one adapter's cache would serve to all
            rollout = grpo._generate_rollout(policy, self.tokenizer, chunk * len(names),
                                             grpo.Decoding(1, self.max_new_tokens, do_sample=False), eos,
                                             extra={"adapter_names": rows})
            for row, text in enumerate(rollout.completions[:len(admitted) * len(chunk)]):
                hits[admitted[row // len(chunk)]] += adheres(text)
        return hits
