"""Adam, with the gradients zeroed after each optimizer step."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('train',
     'optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)',
     'optimizer = torch.optim.Adam(params, lr=cfg.lr)'),
    ('train',
     """        optimizer.zero_grad(set_to_none=True)
""",
     ''),
    ('train',
     """        optimizer.step()
""",
     """        optimizer.step()
        optimizer.zero_grad()
"""),
]
