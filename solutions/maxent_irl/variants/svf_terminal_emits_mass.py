"""Forward pass keeps the terminal rows, so terminal states emit mass (the demo's buggy sample)."""
KIND = "wrong"
EXPECTED = {"test_expected_svf_chain": 0, "test_expected_svf_bruteforce": 0}
PATCHES = [
    ('expected_svf',
     'p_next[is_terminal] = 0.0',
     'pass  # bug: terminal rows kept'),
]
