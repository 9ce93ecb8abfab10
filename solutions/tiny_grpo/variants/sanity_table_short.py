"""A sanity table of six rows (eight asked for)."""
KIND = "wrong"
EXPECTED = {"test_sanity_table": 0}
PATCHES = [
    ('reward',
     """    (P("3 0 2"), " 0 2 3 done", 0.0, "extra words"),
    (P("5 4 3"), " 0 2 3", 0.0, "another prompt's answer"),
""",
     ""),
]
