"""Cell 6, train's records and log (1 point), with a stand-in grpo_step whose loss, kl and gradient depend on
the weights train left: one record per step with loss, reward_mean and kl as the step returned them and
grad_norm before clipping (default comparison, as float32: they earn the point, as only a loop that really
updates the weights gives them), step numbers from 1 (or 0), and a log line every cfg.log_every steps
(rules that only withhold it)."""
import torch
from _training import CONFIG, train_with_stand_in

TODO = "Cell 6, train (records and log)"
POINTS = 1
STEPS, LINES = "record 'step' of each step", "lines printed with cfg.log_every = 1 (3 steps)"
KEYS = ("loss", "reward_mean", "grad_norm", "kl")


def column(records, key: str) -> torch.Tensor:
    """One record key over the steps, as float32 numbers (the values are float32 computations)."""
    return torch.tensor([float(record[key]) for record in records], dtype=torch.float32)     # [steps]


def probe(nb, observe):
    printed = []
    _, _, records, _ = train_with_stand_in(nb, observe, "train: 3 steps of 2 prompts", CONFIG, [], printed)
    if records is None:
        return
    observe("records returned", lambda: len(records))
    observe(STEPS, lambda: [float(record["step"]) for record in records])
    for key in KEYS:
        observe(f"record '{key}' of each step", column, records, key)
    observe.value(LINES, sum(1 for line in "".join(printed).splitlines() if line.strip()))


def judge(check):
    for label in check.expected:
        if label not in (STEPS, LINES):
            check.same(label)
    check.expect(check.got(STEPS) in ([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]), f"{STEPS}: got {check.got(STEPS)}, "
                 "expected the step's number (1, 2, 3 or 0, 1, 2)")
    check.expect(check.got(LINES) >= 3, f"{LINES}: {check.got(LINES)}, expected a log line every cfg.log_every steps")


HINTS = {
    "records returned": "return a list with one record (a dict) per step",
    "record 'loss' of each step": "the loss grpo_step returned",
    "record 'reward_mean' of each step": "the mean of the rewards grpo_step returned",
    "record 'grad_norm' of each step": "the total gradient norm before clipping: what clip_grad_norm_ returns",
    "record 'kl' of each step": "the kl grpo_step returned",
}
