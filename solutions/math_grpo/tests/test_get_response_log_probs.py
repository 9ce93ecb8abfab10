"""get_response_log_probs, requirement 1: the log-probability of each label at the response positions, on a fresh
copy of the kit's tiny model on the CPU, with and without the token entropy asked for.

With return_token_entropy=True compute_entropy is replaced by a stand-in (``_stand_ins``): an unfinished or
wrong compute_entropy costs nothing here."""
from _model import scored
from _stand_ins import ENTROPY

TODO = "get_response_log_probs (log-probs)"
POINTS = 3


def probe(nb, observe):
    observe("log_probs at the response positions", scored, nb, "log_probs")
    with nb.replaced(**ENTROPY):
        observe("log_probs at the response positions, token entropy asked for", scored, nb, "log_probs",
                return_token_entropy=True)


_LOGP = ("log_probs[b, t] = log_softmax(logits)[labels[b, t]] at the position that predicts it (the logits for "
         "input_ids[b, :t + 1]): log-probabilities of the labels, not probabilities, raw logits or input_ids")
HINTS = {"log_probs at the response positions": _LOGP,
         "log_probs at the response positions, token entropy asked for": _LOGP}
