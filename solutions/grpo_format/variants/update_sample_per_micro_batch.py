"""Samples every micro-batch separately (grad_accum generate calls per step); the rollout it logs is the last
micro-batch's, so the logged numbers are wrong as well.
"""
KIND = "wrong"
EXPECTED = {"test_grpo_update": 0}


# answer cell: grpo_update
METRIC_KEYS = ("loss", "kl", "reward_mean", "reward_std", "zero_std_groups", "completion_length",
               "truncated", "grad_norm")


def grpo_update(model, tokenizer, optimizer, batch_prompts: list[str], cfg: GRPOConfig) -> dict:
    """One GRPO optimizer step on one rollout of len(batch_prompts) * cfg.group_size completions.

    Samples them in ONE call, scores and back-propagates them in cfg.grad_accum micro-batches of
    whole groups (each micro-batch's loss divided by cfg.grad_accum), then steps the optimizer.
    Returns {"loss", "kl", "reward_mean", "reward_std", "zero_std_groups", "completion_length",
    "truncated", "grad_norm"} as floats and "texts" (all completions, a list of str).
    """
    if cfg.grad_accum < 1 or len(batch_prompts) % cfg.grad_accum:
        raise ValueError(f"grad_accum={cfg.grad_accum} must be >= 1 and divide the {len(batch_prompts)} prompts")
    micro_rows = len(batch_prompts) // cfg.grad_accum * cfg.group_size   # rows per micro-batch: whole groups
    device = next(model.parameters()).device
    trainable = [p for p in model.parameters() if p.requires_grad]
    model.train()
    optimizer.zero_grad(set_to_none=True)
    rollout, rewards, losses, kls = None, None, [], []
    rows_per_part = len(batch_prompts) // cfg.grad_accum
    for part_index in range(cfg.grad_accum):   # one generate call per micro-batch
        prompts = batch_prompts[part_index * rows_per_part:(part_index + 1) * rows_per_part]
        rollout = grpo.sample_completions(model, tokenizer, prompts, cfg.group_size, cfg.max_new_tokens,
                                          temperature=cfg.temperature, do_sample=True)
        rewards = format_reward(rollout.completions).to(device)                          # [n]
        advantages = compute_group_advantages(rewards, cfg.group_size)                   # [n]
        mask = rollout.completion_mask.float()                                           # [n, t]
        args = (rollout.sequences, rollout.attention_mask, rollout.prompt_width, cfg.temperature)
        logp_new = (grpo.token_logprobs(model, *args) * mask).sum(dim=1)                 # [n]
        logp_ref = (grpo.reference_token_logprobs(model, *args) * mask).sum(dim=1)       # [n]
        loss = grpo_sequence_loss(logp_new, logp_ref, advantages, beta=cfg.beta, epsilon=cfg.epsilon)
        (loss / cfg.grad_accum).backward()
        delta = logp_ref - logp_new.detach()                                             # [n]
        losses.append(loss.item())
        kls.append((torch.exp(delta) - delta - 1.0).mean().item())
    if rollout is None or rewards is None or len(losses) != cfg.grad_accum or len(kls) != cfg.grad_accum:
        raise RuntimeError(f"grpo_update: set `rollout` and `rewards`, and append one loss and one kl per "
                           f"micro-batch ({cfg.grad_accum} of them; got {len(losses)} and {len(kls)})")
    grad_norm = torch.nn.utils.clip_grad_norm_(trainable, cfg.max_grad_norm)
    optimizer.step()
    metrics = grpo.rollout_stats(rollout, rewards)   # reward_mean, reward_std, zero_std_groups, length, truncated
    metrics.update(loss=sum(losses) / len(losses), kl=sum(kls) / len(kls), grad_norm=float(grad_norm),
                   texts=list(rollout.completions))
    return metrics
