"""Tokenization, requirement 1: input_ids and labels for four pairs, one of which splits a word between prompt and
output (the kit's tiny tokenizer, whatever the profile)."""
from _model import tokenizer

TODO = "Tokenization (input_ids and labels)"
POINTS = 2
PROMPTS = ["Solve for $x$: $x + 3 = 13$.", "What is $\\frac{1}{2} + 3$?", "7 - 0 =", "So th"]
OUTPUTS = [" 10 </think> <answer> 10 </answer>", " it is 3.5", " 7", "e answer is 4"]


def part(nb, key: str):
    batch = nb.tokenize_prompt_and_output(PROMPTS, OUTPUTS, tokenizer())
    if not isinstance(batch, dict) or key not in batch:
        raise LookupError(f"return a dict with input_ids, labels and response_mask (no {key!r})")
    return batch[key]


def probe(nb, observe):
    observe("input_ids", part, nb, "input_ids")
    observe("labels", part, nb, "labels")


HINTS = {"input_ids": "the prompt's ids then the output's ids, each tokenized separately without special tokens (a "
                      "word split between them tokenizes differently as one string), right-padded with pad_token_id "
                      "to the longest pair, without the last position",
         "labels": "the same padded sequences without their first position (input_ids shifted left by one)"}
