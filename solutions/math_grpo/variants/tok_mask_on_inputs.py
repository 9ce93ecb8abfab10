"""Aligns the response mask with input_ids instead of labels (off by one)."""
KIND = "wrong"
EXPECTED = {"test_tokenize_prompt_and_output_mask": 0}
PATCHES = [
    ('tokenize_prompt_and_output',
     'return {"input_ids": full[:, :-1], "labels": full[:, 1:], "response_mask": is_output[:, 1:]}',
     'return {"input_ids": full[:, :-1], "labels": full[:, 1:], "response_mask": is_output[:, :-1]}'),
]
