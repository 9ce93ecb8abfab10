"""Make_prompts never looks at exclude, so held-out prompts can be training prompts."""
KIND = "wrong"
EXPECTED = {"test_dataset": 0}
PATCHES = [
    ('dataset',
     'rng, taken, prompts = random.Random(seed), set(exclude), []',
     'rng, taken, prompts = random.Random(seed), set(), []'),
]
