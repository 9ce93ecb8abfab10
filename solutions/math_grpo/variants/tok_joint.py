"""Tokenizes prompt + output as one string and masks by the prompt's token count."""
KIND = "wrong"
EXPECTED = {"test_tokenize_prompt_and_output": 0, "test_tokenize_prompt_and_output_mask": 0}
PATCHES = [
    ('tokenize_prompt_and_output',
     '    output_ids = [tokenizer(o, add_special_tokens=False)["input_ids"] for o in output_strs]',
     """    joint = [tokenizer(p + o, add_special_tokens=False)["input_ids"] for p, o in zip(prompt_strs, output_strs)]
    output_ids = [j[len(p):] for j, p in zip(joint, prompt_ids)]"""),
]
