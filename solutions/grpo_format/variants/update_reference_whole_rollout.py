"""The reference log-probs of the whole rollout at once, before the micro-batch loop."""
KIND = "allowed"
EXPECTED = {}


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
    rollout = grpo.sample_completions(model, tokenizer, batch_prompts, cfg.group_size, cfg.max_new_tokens,
                                      temperature=cfg.temperature, do_sample=True)       # N rows
    rewards = format_reward(rollout.completions).to(device)                              # [N]
    advantages = compute_group_advantages(rewards, cfg.group_size)                       # [N]
    mask = rollout.completion_mask.float()                                               # [N, T]
    ref_all = (grpo.reference_token_logprobs(model, rollout.sequences, rollout.attention_mask,
                                             rollout.prompt_width, cfg.temperature) * mask).sum(dim=1)   # [N]
    for rows, part in rollout.micro_batches(micro_rows):
        new_tokens = grpo.token_logprobs(model, part.sequences, part.attention_mask, part.prompt_width,
                                         cfg.temperature)                                # [n, t]
        logp_new = (new_tokens * part.completion_mask.float()).sum(dim=1)                # [n]
        logp_ref = ref_all[rows]                                                         # [n]
        loss = grpo_sequence_loss(logp_new, logp_ref, advantages[rows], beta=cfg.beta, epsilon=cfg.epsilon)
        (loss / cfg.grad_accum).backward()
        losses.append(loss.item())
        kls.append((torch.exp(logp_ref - logp_new.detach()) - (logp_ref - logp_new.detach()) - 1.0).mean().item())
    if rollout is None or rewards is None or len(losses) != cfg.grad_accum or len(kls) != cfg.grad_accum:
        raise RuntimeError(f"grpo_update: set `rollout` and `rewards`, and append one loss and one kl per "
                           f"micro-batch ({cfg.grad_accum} of them; got {len(losses)} and {len(kls)})")
    grad_norm = torch.nn.utils.clip_grad_norm_(trainable, cfg.max_grad_norm)
    optimizer.step()
    metrics = grpo.rollout_stats(rollout, rewards)   # reward_mean, reward_std, zero_std_groups, length, truncated
    metrics.update(loss=sum(losses) / len(losses), kl=sum(kls) / len(kls), grad_norm=float(grad_norm),
                   texts=list(rollout.completions))
    return metrics
