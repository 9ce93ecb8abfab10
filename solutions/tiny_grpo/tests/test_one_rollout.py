"""Cell 5, grpo_step samples the whole step in one grpo.sample_completions call (1 point checks only
this): with a sampler whose every call draws other rows, the rewards, advantages and loss the step
returns are the reference's only if it trained on one rollout of all B x G rows, and the sampler is
called once (that count only withholds the point). Default comparison, the tests' stand-ins."""
import torch
from _world import PROMPTS, STAND_INS, StepConfig, fixed_sampling, tiny_policy, tokenizer

TODO = "Cell 5, grpo_step (one rollout per step)"
CALLS = "calls to grpo.sample_completions in one step"


def as_float32(value):
    return torch.tensor(float(value), dtype=torch.float32)


def probe(nb, observe):
    tok, policy, calls, done = tokenizer(), tiny_policy(nudge=True), [], []
    with nb.replaced(**STAND_INS), fixed_sampling(tok, calls, fresh=True):
        torch.manual_seed(11)
        observe("grpo_step when every sampler call draws other rows",
                lambda: done.append(nb.grpo_step(policy, tok, list(PROMPTS), StepConfig())))
    if done:
        observe("rewards", lambda: done[0]["rewards"])
        observe("advantages", lambda: done[0]["advantages"])
        observe("loss", lambda: as_float32(done[0]["loss"]))
    observe.value(CALLS, len(calls))


_ONE = ("draw all B x G completions of the step in ONE call, grpo.sample_completions(model, tokenizer, prompts, G, "
        "...), and train on that rollout")
HINTS = {CALLS: _ONE + "; no other sample (no greedy one to watch)", "rewards": _ONE, "advantages": _ONE,
         "loss": _ONE}
