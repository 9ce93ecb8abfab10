"""Passes an attention mask built from the pad id (changes only padded positions)."""
KIND = "allowed"
EXPECTED = {}
PATCHES = [
    ('get_response_log_probs',
     'logits = model(input_ids=input_ids).logits.float()  # [B, T, V]',
     ('logits = model(input_ids=input_ids, attention_mask=(input_ids != model.config.pad_token_id).long()).l'
      'ogits.float()')),
]
