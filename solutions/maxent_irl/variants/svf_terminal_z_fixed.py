"""Keeps Z = 1 on terminal states instead of sweeping them like every other state."""
KIND = "wrong"
EXPECTED = {"test_expected_svf_bruteforce": 0}
PATCHES = [
    ('expected_svf',
     'Za = exp_reward[:, None] * (p_rows @ Zs).reshape(n_states, n_actions)      # (S, A)',
     """Za = exp_reward[:, None] * (p_rows @ Zs).reshape(n_states, n_actions)      # (S, A)
        Za[is_terminal] = 1.0 / n_actions"""),
]
