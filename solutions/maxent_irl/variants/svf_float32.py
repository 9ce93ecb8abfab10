"""Computes the backward sweep and the one-step matrix in float32 (correct at float32 precision)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('expected_svf',
     'Za = exp_reward[:, None] * (p_rows @ Zs).reshape(n_states, n_actions)      # (S, A)',
     'Za = (exp_reward[:, None] * (p_rows @ Zs).reshape(n_states, n_actions)).astype(np.float32)'),
    ('expected_svf',
     'p_next = np.einsum("sa,sak->sk", policy, p_sa)       # (S, S\'): P(s\' | s) following the policy',
     'p_next = np.einsum("sa,sak->sk", policy, p_sa).astype(np.float32)'),
]
