"""Sample std (unbiased) where the contract pins the population std."""
KIND = "wrong"
EXPECTED = {"test_group_advantages": 0}
PATCHES = [
    ('group_advantages',
     'unbiased=False',
     'unbiased=True'),
]
