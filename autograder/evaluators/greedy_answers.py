"""tiny_grpo: the greedy answers of the base model and of the student's adapter, made by the grader.

The student designs the task, so what counts as right comes from the notebook (its ``make_prompts``
and ``expected_answer``, reported by the hidden test's probe); the answers the model gives do not:
they are generated here, outside the kernel, from the submitted ``artifacts/tiny_grpo_adapter``
(accepted under the manifest's adapter rules, attached with a config the grader builds) on the
profile's base model, adapter off and on, greedy, in batches. A notebook can choose its task; it
cannot report answers its adapter did not give.
"""
from __future__ import annotations

from pathlib import Path

MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
BATCH = 100
MAX_PROMPTS = 400
MAX_NEW_TOKENS = 64


class Evaluator:
    metric = "greedy_answers"

    def __init__(self, profile: str):
        from autograder.evaluators.shared_base import SharedBase
        from helpers import lm

        self.profile = profile
        self.name = lm.resolve_model(profile, MODEL_ID)
        self.tokenizer = lm.load_tokenizer(self.name)
        self.shared = SharedBase(lambda: lm.load_model(self.name, quantize_4bit=False))
        self.base_model = lm.base_model_identity(self.shared.model)

    def describe(self) -> dict:
        return {"metric": self.metric, "profile": self.profile, "base_model": self.base_model}

    def _greedy(self, policy, prompts: list[str], max_new_tokens: int) -> list[str]:
        from helpers import grpo

        out = []
        for start in range(0, len(prompts), BATCH):
            rollout = grpo.sample_completions(policy, self.tokenizer, prompts[start:start + BATCH], 1, max_new_tokens,
                                              do_sample=False)
            out += rollout.completions
        return out

    def measure(self, adapter: Path, rules=None, prompts=(), max_new_tokens: int = 16) -> dict:
        import torch

        from autograder.evaluators.adapters import attach
        from helpers import grpo

        result = {**self.describe(), "base": None, "tuned": None, "error": None}
        prompts = [str(p) for p in list(prompts)[:MAX_PROMPTS]]
        max_new_tokens = max(1, min(int(max_new_tokens), MAX_NEW_TOKENS))
        policy = None
        try:
            policy, problem = attach(self.shared.model, Path(adapter), rules, self.base_model)
            if problem:
                result["error"] = problem
                return result
            policy.eval()
            grpo.enable_fast_sampling(policy, self.tokenizer, mode="eager")  # the shared prompt prefix prefilled once
            with torch.no_grad():
                with grpo.adapter_disabled(policy):
                    result["base"] = self._greedy(policy, prompts, max_new_tokens)
                result["tuned"] = self._greedy(policy, prompts, max_new_tokens)
        except Exception as error:  # noqa: BLE001 - this submission's adapter only
            result["error"] = f"the adapter could not be used ({type(error).__name__}: {str(error)[:200]})"
        finally:
            if policy is not None:
                grpo.disable_fast_sampling(policy)
            result["base_reloaded"] = self.shared.release(policy)
        return result
