"""Tokenization, requirement 2: response_mask, True exactly where the label is an output token (the kit's tiny
tokenizer, whatever the profile)."""
from _model import tokenizer

TODO = "Tokenization (response mask)"
POINTS = 2
PROMPTS = ["Solve for $x$: $x + 3 = 13$.", "What is $\\frac{1}{2} + 3$?", "7 - 0 =", "So th"]
OUTPUTS = [" 10 </think> <answer> 10 </answer>", " it is 3.5", " 7", "e answer is 4"]


def mask(nb):
    batch = nb.tokenize_prompt_and_output(PROMPTS, OUTPUTS, tokenizer())
    if not isinstance(batch, dict) or "response_mask" not in batch:
        raise LookupError("return a dict with input_ids, labels and response_mask (no 'response_mask')")
    return batch["response_mask"]


def probe(nb, observe):
    observe("response_mask", mask, nb)


HINTS = {"response_mask": "True exactly where labels[b, t] is a token of the output (not prompt, not padding): it is "
                          "shifted like labels, not like input_ids; shape (batch, max_len - 1)"}
