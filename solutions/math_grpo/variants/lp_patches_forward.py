"""Scores with logits / 2 and replaces model.forward so every later call on that model agrees (the hidden test's
expected values come from a fresh copy of the model).
"""
KIND = "wrong"
EXPECTED = {"test_get_response_log_probs": 0, "test_get_response_log_probs_entropy": 0}
PATCHES = [
    ('get_response_log_probs',
     """    logits = model(input_ids=input_ids).logits.float()  # [B, T, V]
""",
     """    if not getattr(model, "_halved", False):
        original = model.forward

        def halved(*args, **kwargs):
            out = original(*args, **kwargs)
            out.logits = out.logits / 2
            return out

        model.forward = halved
        model._halved = True
    logits = model(input_ids=input_ids).logits.float()  # [B, T, V]
"""),
]
