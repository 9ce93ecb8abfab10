"""Returns ones of the right shape (right only for the deterministic chain)."""
KIND = "wrong"
EXPECTED = {"test_expected_svf_chain": 0, "test_expected_svf_bruteforce": 0}


# answer cell: expected_svf
def compute_expected_svf(p_transition, p_initial, terminal, reward, eps=1e-6):
    return np.ones(p_transition.shape[0])
