"""One grpo.sample_completions call per prompt (B rollouts per step), otherwise right."""
KIND = "wrong"
EXPECTED = {"test_one_rollout": 0}


# answer cell: grpo_step
def grpo_step(model, tokenizer, prompts: list[str], cfg: Config) -> dict:
    G = cfg.group_size
    rollouts = [grpo.sample_completions(model, tokenizer, [p], G, cfg.max_new_tokens, temperature=cfg.temperature) for p in prompts]
    completions = [c for r in rollouts for c in r.completions]
    rewards = torch.as_tensor(get_reward([p for p in prompts for _ in range(G)], completions), dtype=torch.float32)  # [N]
    n_rows = len(completions)
    penalty = torch.zeros_like(rewards)  # [N] each completion's summed k3 when the KL is a reward penalty
    if cfg.beta > 0 and cfg.kl_penalty == "reward":
        with torch.no_grad():
            for k, rollout in enumerate(rollouts):
                for rows, part in rollout.micro_batches(cfg.micro_batch):
                    args = (part.sequences, part.attention_mask, part.prompt_width, cfg.temperature)
                    mine = grpo.token_logprobs(model, *args, score=completion_logprobs)  # [n, t]
                    base = grpo.reference_token_logprobs(model, *args, score=completion_logprobs)  # [n, t]
                    penalty[k * G:(k + 1) * G][rows] = (k3_kl(mine, base) * part.completion_mask).sum(1)
    advantages = group_advantages(rewards - cfg.beta * penalty, G)  # [N]
    beta = cfg.beta if cfg.kl_penalty == "loss" else 0.0
    loss_sum = kl_sum = 0.0
    for k, rollout in enumerate(rollouts):
        for rows, part in rollout.micro_batches(cfg.micro_batch):
            args = (part.sequences, part.attention_mask, part.prompt_width, cfg.temperature)
            logprobs = grpo.token_logprobs(model, *args, score=completion_logprobs)  # [n, t]
            ref = grpo.reference_token_logprobs(model, *args, score=completion_logprobs) if beta > 0 else None
            share = part.num_rows / n_rows
            adv = advantages[k * G: (k + 1) * G][rows].to(logprobs.device)  # [n]
            loss = grpo_loss(logprobs, adv, part.completion_mask, ref, beta) * share
            loss.backward()
            loss_sum += loss.item()
            if ref is not None:
                mask = part.completion_mask.to(logprobs.dtype)
                kl_sum += (k3_kl(logprobs.detach(), ref) * mask).sum(1).mean().item() * share
    return {"loss": loss_sum, "rewards": rewards, "advantages": advantages, "kl": kl_sum, "rollout": rollouts[0]}
