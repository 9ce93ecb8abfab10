"""Problem 4, requirement 3: metadata["clipped"] marks the clipped tokens and "clip_fraction" is its mean.

The docstring accepts two conventions for "clipped" (the min picked the clipped term, or the ratio left
[1 - eps, 1 + eps]); they differ only where the clip cannot act (A = 0, or a ratio that moved against
the advantage). These inputs have no such token: every advantage is non-zero and every ratio outside
the range moved in its advantage's direction, so both conventions give the reference's mask.
"""
import torch
from _batch import column, log_probs

TODO = "Problem 4 (GRPO-Clip metadata)"
POINTS = 2
SIGNED = [[1.5], [-0.5], [2.0], [-1.0]]                                              # (B, 1), no zero


def agreeing_case():
    """(advantages, new, old): log-ratios sign(A) * u with u in [-0.08, 0.5], so a ratio leaves [0.9, 1.1]
    (or [0.8, 1.2]) only in the direction its advantage pushes."""
    old = log_probs(50)                                                              # (B, T)
    u = -0.08 + 0.58 * torch.rand(old.shape, generator=torch.Generator().manual_seed(51), dtype=torch.float64)
    advantages = column(SIGNED)
    return advantages, old + torch.sign(advantages) * u, old


def clip_metadata(clip, cliprange):
    advantages, new, old = agreeing_case()
    meta = clip(advantages, new, old, cliprange)[1]
    if not isinstance(meta, dict) or not {"clipped", "clip_fraction"} <= set(meta):
        keys = sorted(map(str, meta)) if isinstance(meta, dict) else type(meta).__name__
        raise LookupError(f"metadata must hold 'clipped' and 'clip_fraction' (it has {keys})")
    return {"clipped": meta["clipped"], "clip_fraction": meta["clip_fraction"]}


def probe(nb, observe):
    for cliprange in (0.2, 0.1):
        observe(f"metadata, cliprange {cliprange}", clip_metadata, nb.compute_grpo_clip_loss, cliprange)


_META = ("metadata['clipped'] is a (batch, seq) mask of the clipped tokens (the clipped term strictly below the "
         "unclipped one, or the ratio outside [1 - eps, 1 + eps]) and metadata['clip_fraction'] its mean over all "
         "tokens; the keys are spelled exactly so")
HINTS = {"metadata, cliprange 0.2": _META, "metadata, cliprange 0.1": _META}
