"""Cell 5, grpo_step's loss (2 points): the loss it returns, the gradient it leaves on the LoRA weights
(micro-batches weighted by their share of rows, log-probs at cfg.temperature, the KL term's reference
log-probs when cfg.beta > 0) and its kl. On a fixed rollout of the tiny model, with the tests' stand-ins;
default comparison, and a judge for kl, which may follow either aggregation of the student's loss."""
import torch
from _rules import rescaled
from _world import PROMPTS, STAND_INS, StepConfig, fixed_rollout, fixed_sampling, tiny_policy, tokenizer, trainable

from autograder.compare import difference

TODO = "Cell 5, grpo_step (loss, gradient, kl)"
POINTS = 2


def as_float32(value):
    """A float32 number: the model computes in float32, whatever type carries the value back."""
    return torch.tensor(float(value), dtype=torch.float32)


def gradient(policy) -> torch.Tensor:
    """Every LoRA weight's gradient (zeros where there is none), as one vector."""
    return torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
                      for p in trainable(policy).values()])                                        # [n_lora]


def probe(nb, observe):
    tok, policy, cfg, done = tokenizer(), tiny_policy(nudge=True), StepConfig(), []
    lengths = fixed_rollout(tok, PROMPTS, cfg.group_size, cfg.max_new_tokens).completion_mask.sum(dim=1)  # [N]
    observe.value("completion lengths of the fixed rollout", lengths)
    with nb.replaced(**STAND_INS), fixed_sampling(tok, []):
        torch.manual_seed(11)
        observe("grpo_step on 3 prompts, G = 4", lambda: done.append(nb.grpo_step(policy, tok, list(PROMPTS), cfg)))
    if done:
        observe("loss", lambda: as_float32(done[0]["loss"]))
        observe("kl", lambda: as_float32(done[0]["kl"]))
        observe.value("LoRA weights without a gradient", sum(p.grad is None for p in trainable(policy).values()))
        observe.sketch("gradient of the LoRA weights", gradient(policy))


def judge(check):
    for label in ("grpo_step on 3 prompts, G = 4", "loss", "LoRA weights without a gradient",
                  "gradient of the LoRA weights"):
        check.same(label)
    # the stand-in k3_kl reads 0.5 per token: summed per completion (the reference) or averaged over its tokens
    lengths = check.want("completion lengths of the fixed rollout")
    per_token = rescaled(check.expected["kl"], [len(lengths) / sum(lengths)])
    if isinstance(check.raw("kl"), dict) and difference(check.raw("kl"), per_token) is None:
        check.expect(True, "kl")
    else:
        check.same("kl")


HINTS = {
    "loss": "per (rows, part) of rollout.micro_batches(cfg.micro_batch): grpo.token_logprobs at cfg.temperature "
            "with score=completion_logprobs, grpo.reference_token_logprobs too when cfg.beta > 0 (KL in the loss), "
            "grpo_loss(logprobs, advantages[rows], part.completion_mask, ref, cfg.beta) times the part's share of "
            "rows; return the sum of those",
    "LoRA weights without a gradient": "call backward() on each part's loss, with the log-probs on the graph "
                                       "(no torch.no_grad, no detach)",
    "gradient of the LoRA weights": "each part's loss weighted by part.num_rows / N before backward(), so that the "
                                    "step's gradient is the whole step's mean; scored at cfg.temperature, with "
                                    "the KL term's reference log-probs",
    "kl": "the k3 term as your loss aggregates it (k3_kl times the mask, summed per completion or averaged over "
          "its tokens), averaged over all N rows, without beta; 0.0 without a KL term",
}
