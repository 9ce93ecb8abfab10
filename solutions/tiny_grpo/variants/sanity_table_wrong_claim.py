"""A sanity row claims 1.0 for a copy of the prompt, which the reward scores 0.0."""
KIND = "wrong"
EXPECTED = {"test_sanity_table": 0}
PATCHES = [
    ('reward',
     '(P("3 0 2"), " 3 0 2", 0.0, "copy of the prompt")',
     '(P("3 0 2"), " 3 0 2", 1.0, "copy of the prompt")'),
]
