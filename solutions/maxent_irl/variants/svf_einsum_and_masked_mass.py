"""Einsum in the backward step; the forward pass masks terminal mass in d instead of rows of P."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('expected_svf',
     'Za = exp_reward[:, None] * (p_rows @ Zs).reshape(n_states, n_actions)      # (S, A)',
     'Za = np.einsum("sak,k->sa", p_sa, Zs) * exp_reward[:, None]'),
    ('expected_svf',
     """    p_next = np.einsum("sa,sak->sk", policy, p_sa)       # (S, S'): P(s' | s) following the policy
    p_next[is_terminal] = 0.0                            # a trajectory ends at a terminal state
    for t in range(1, horizon):
        d[t] = d[t - 1] @ p_next                         # (S',)""",
     """    p_next = np.einsum("sa,sak->sk", policy, p_sa)
    for t in range(1, horizon):
        d[t] = (d[t - 1] * ~is_terminal) @ p_next"""),
]
