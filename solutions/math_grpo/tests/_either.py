"""Grader side only (never sent to the kernel): a check that passes with the stand-ins or with the
student's own functions.

The probes that swap in stand-ins (``_stand_ins``) also run the same calls with the notebook's own
functions, under the label plus :data:`OWN`. A label passes when the stand-in run matches the
reference's, or when the student's own run matches the reference's own run: a student who calls the
other TODOs earns the points whatever those TODOs get wrong, and one who wrote their code inline
(correctly) earns them too.
"""
from autograder.compare import difference

OWN = " (with your own functions)"


def stand_ins_or_own(check) -> None:
    for label in check.expected:
        if label.endswith(OWN):
            continue
        own = label + OWN
        if own in check.expected and difference(check.raw(own), check.expected[own]) is None:
            check.expect(True, label)
        else:
            check.same(label)                  # the failure line names the stand-in run's difference
