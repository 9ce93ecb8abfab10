"""Expected_answer gives one fixed answer whatever the prompt."""
KIND = "wrong"
EXPECTED = {"test_expected_answer": 0, "test_sanity_table": 0, "test_eval_improvement": 0}
PATCHES = [
    ('dataset',
     'return " ".join(sorted(found[-1].split()))',
     'return "0 1 2"'),
]
