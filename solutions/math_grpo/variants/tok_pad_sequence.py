"""Pad_sequence on lists of tensors."""
KIND = "allowed"
EXPECTED = {}


# answer cell: tokenize_prompt_and_output
def tokenize_prompt_and_output(prompt_strs: List[str], output_strs: List[str], tokenizer) -> dict[str, torch.Tensor]:
    """Tokenize prompts and outputs separately (``add_special_tokens=False``), concatenate
    each pair, right-pad with ``tokenizer.pad_token_id`` to the longest pair, then shift.

    Returns (all of shape (batch_size, max_len - 1), where max_len is the longest
    prompt + output):
        input_ids: the padded sequences without their last token;
        labels: the padded sequences without their first token (the next-token targets);
        response_mask: True where the label is a token of the output, False for prompt and
            padding.
    """
    ### BEGIN SOLUTION
    from torch.nn.utils.rnn import pad_sequence

    rows, masks = [], []
    for prompt, output in zip(prompt_strs, output_strs):
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        o = tokenizer(output, add_special_tokens=False)["input_ids"]
        rows.append(torch.tensor(p + o))
        masks.append(torch.tensor([False] * len(p) + [True] * len(o)))
    full = pad_sequence(rows, batch_first=True, padding_value=tokenizer.pad_token_id)
    mask = pad_sequence(masks, batch_first=True, padding_value=False)
    return {"input_ids": full[:, :-1], "labels": full[:, 1:], "response_mask": mask[:, 1:]}
    ### END SOLUTION
