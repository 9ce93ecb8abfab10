"""Make_prompts appends every draw: duplicates and excluded prompts slip through."""
KIND = "wrong"
EXPECTED = {"test_dataset": 0}
PATCHES = [
    ('dataset',
     """        if prompt not in taken:  # distinct, and never an excluded one
            taken.add(prompt)
            prompts.append(prompt)""",
     '        prompts.append(prompt)'),
]
