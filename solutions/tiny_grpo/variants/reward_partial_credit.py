"""Partial credit below 1.0 (digits found x ordering, the kit's old reward) with its own sanity table."""
KIND = "allowed"
EXPECTED = {}


# answer cell: reward
def get_reward(prompts: list[str], responses: list[str]) -> list[float]:
    """One reward in [0, 1] per pair; 1.0 exactly for expected_answer(prompt), whitespace collapsed."""
    rewards = []
    for prompt, response in zip(prompts, responses):
        want, got = expected_answer(prompt).split(), response.split()
        if got == want:
            rewards.append(1.0)
            continue
        unused, hit = list(want), 0
        for token in got:  # each expected digit matches once
            if token in unused:
                unused.remove(token)
                hit += 1
        order = sum(a <= b for a, b in zip(got, got[1:])) / max(len(got) - 1, 1)
        rewards.append(0.8 * hit / max(len(got), len(want)) * (0.5 + 0.5 * order) if hit else 0.0)
    return rewards


P = task_prompt
SANITY_CASES = [
    (P("3 0 2"), " 0 2 3", 1.0, "correct"),
    (P("3 0 2"), "0 2 3\n", 1.0, "other whitespace"),
    (P("3 0 2"), " 3 0 2", 0.6, "copy: right digits, half the pairs in order"),
    (P("3 0 2"), " 0 2 3 done", 0.6, "extra word"),
    (P("3 0 2"), " 0 2", 0.8 * 2 / 3, "digit missing"),
    (P("3 0 2"), " 7 8 9", 0.0, "no right digit"),
    (P("3 0 2"), "", 0.0, "empty"),
    (P("3 0 2"), " \n ", 0.0, "whitespace only"),
]
