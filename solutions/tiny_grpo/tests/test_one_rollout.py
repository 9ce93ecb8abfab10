"""Cell 5, grpo_step samples the whole step in one grpo.sample_completions call (1 point checks only
this); the count of calls, whatever the step does after; default comparison."""
import torch
from _world import PROMPTS, STAND_INS, StepConfig, fixed_sampling, tiny_policy, tokenizer

TODO = "Cell 5, grpo_step (one rollout per step)"


def probe(nb, observe):
    tok, policy, calls = tokenizer(), tiny_policy(nudge=True), []
    with nb.replaced(**STAND_INS), fixed_sampling(tok, calls):
        torch.manual_seed(11)
        try:
            nb.grpo_step(policy, tok, list(PROMPTS), StepConfig())
        except Exception:  # noqa: BLE001 - only the number of sampler calls is graded here
            pass
    observe.value("calls to grpo.sample_completions in one step", len(calls))


HINTS = {"calls to grpo.sample_completions in one step": "draw all B x G completions of the step in ONE call, "
                                                         "grpo.sample_completions(model, tokenizer, prompts, G, ...), "
                                                         "and no other sample (no greedy one to watch)"}
