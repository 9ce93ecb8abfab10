"""Another generator (rng.choices, a different parser): other prompts, same task."""
KIND = "allowed"
EXPECTED = {}


# answer cell: dataset
def task_prompt(digits: str) -> str:
    return lm.SORT_PROMPT_TEMPLATE.format(digits=digits)


def make_prompts(n: int, seed: int, exclude=()) -> list[str]:
    """n distinct prompts of your task, the same list for the same seed, none of them in exclude."""
    rng = random.Random(seed)
    seen = set(exclude)
    out = []
    while len(out) < n:
        length = rng.choice([3, 4, 5, 6])
        prompt = task_prompt(" ".join(rng.choices("0123456789", k=length)))
        if prompt in seen:
            continue
        seen.add(prompt)
        out.append(prompt)
    return out


def expected_answer(prompt: str) -> str:
    """The one correct response to prompt."""
    digits = prompt.split("Sort the digits:", 1)[1].split("\n", 1)[0].split()
    return " ".join(sorted(digits))
