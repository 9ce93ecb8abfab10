"""Returns a float tensor instead of a list."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('reward',
     """return [1.0 if response.split() == expected_answer(prompt).split() else 0.0  # all or nothing (Cell 1)
            for prompt, response in zip(prompts, responses)]""",
     """return torch.tensor([float(response.split() == expected_answer(prompt).split())
                         for prompt, response in zip(prompts, responses)])"""),
]
