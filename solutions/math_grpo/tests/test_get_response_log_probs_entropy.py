"""get_response_log_probs, requirement 2: token_entropy at the response positions, on a fresh copy of the kit's
tiny model on the CPU.

compute_entropy is replaced by a stand-in (``_stand_ins``), so a mistake in it costs only its own points;
the same call with the student's own compute_entropy counts too (``_either``)."""
from _either import OWN, stand_ins_or_own
from _model import scored
from _stand_ins import ENTROPY

TODO = "get_response_log_probs (token entropy)"
POINTS = 1


def probe(nb, observe):
    with nb.replaced(**ENTROPY):
        observe("token_entropy at the response positions", scored, nb, "token_entropy", return_token_entropy=True)
    observe("token_entropy at the response positions" + OWN, scored, nb, "token_entropy", return_token_entropy=True)


def judge(check):
    stand_ins_or_own(check)


HINTS = {"token_entropy at the response positions":
         "with return_token_entropy=True add 'token_entropy', shape of labels: compute_entropy of the same logits "
         "that score each label (the check replaces compute_entropy by a simple stand-in: call it)"}
