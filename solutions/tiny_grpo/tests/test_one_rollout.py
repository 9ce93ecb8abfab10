"""Cell 5, grpo_step samples the whole step in one grpo.sample_completions call (1 point checks only
this): with a sampler whose every call draws other rows, the responses the step hands to get_reward must
be those of one call for all B x G rows (sorted, so the order the step scores them in does not matter), and
the sampler is called once (that count only withholds the point). Default comparison, the tests' stand-ins."""
import torch
from _world import PROMPTS, STAND_INS, StepConfig, fixed_sampling, length_reward, tiny_policy, tokenizer

TODO = "Cell 5, grpo_step (one rollout per step)"
POINTS = 1
CALLS, SCORED = "calls to grpo.sample_completions in one step", "the responses the step scored, sorted"


def probe(nb, observe):
    tok, policy, calls, seen = tokenizer(), tiny_policy(nudge=True), [], []

    def recording_reward(prompts, responses):
        seen.extend(responses)
        return length_reward(prompts, responses)

    with nb.replaced(**{**STAND_INS, "get_reward": recording_reward}), fixed_sampling(tok, calls, fresh=True):
        torch.manual_seed(11)
        observe("grpo_step when every sampler call draws other rows",
                lambda: nb.grpo_step(policy, tok, list(PROMPTS), StepConfig()) and None)  # only whether it ran
    observe.value(SCORED, sorted(seen))
    observe.value(CALLS, len(calls))


HINTS = {CALLS: "draw all B x G completions of the step in ONE call, grpo.sample_completions(model, tokenizer, "
                "prompts, G, ...), and no other sample (no greedy one to watch)",
         SCORED: "score the completions of that one rollout, every row once (get_reward on all B x G of them)"}
