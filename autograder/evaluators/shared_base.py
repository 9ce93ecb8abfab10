"""A base model an evaluator keeps loaded across submissions, provably unchanged by each of them.

Loading the base once per evaluator process saves seconds per submission, but every submission's
adapter is attached to that same object. So after each measurement (and after a load that failed
halfway) the base is checked against a fingerprint taken when it was loaded: the names, shapes
and dtypes of its parameters and buffers (an adapter left half-attached adds ``lora_`` modules)
and a keyed hash of their bytes (an option that rewrote a weight in place changes it). When
anything differs the base is reloaded from disk before the next submission. The hash is a sum of
every byte times a weight drawn from a per-process secret, so an adapter cannot be built to
leave it unchanged; it runs on the model's own device (milliseconds for the tiny model, well
under a second for Qwen2.5-0.5B in 4 bits on a GPU).
"""
from __future__ import annotations

import secrets

CHUNK = 1 << 24  # bytes hashed at once (bounded temporary memory on the GPU)
MODULUS = 65521


def _structure(model) -> tuple:
    return tuple((name, tuple(t.shape), str(t.dtype)) for name, t in
                 [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)])


def _hash_tensor(tensor, a: int, b: int) -> int:
    import torch

    raw = tensor.detach().contiguous().reshape(-1).view(torch.uint8)
    total = 0
    for start in range(0, raw.numel(), CHUNK):
        part = raw[start:start + CHUNK].to(torch.int64)
        weights = (torch.arange(start, start + part.numel(), device=part.device, dtype=torch.int64) * a + b) % MODULUS
        total += int(torch.sum(part * (weights + 1)).item())
    return total


def fingerprint(model, key: tuple[int, int]) -> tuple:
    """(structure, keyed hash of every parameter and buffer) of ``model``."""
    import torch

    a, b = key
    with torch.no_grad():
        values = tuple(_hash_tensor(t, a, b) for _, t in
                       [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)])
    return _structure(model), values


class SharedBase:
    """``load()`` gives the model; ``release(policy)`` detaches an adapter and makes sure the base
    is as it was loaded (reloading it when not). ``reloads`` counts how often that was needed."""

    def __init__(self, load):
        self._load = load
        self._key = (secrets.randbelow(MODULUS - 1) + 1, secrets.randbelow(MODULUS))
        self.model = self._fresh()
        self.reloads = 0

    def _fresh(self):
        model = self._load()
        model.eval()
        self._expected = fingerprint(model, self._key)
        return model

    def release(self, policy=None) -> bool:
        """Detach ``policy``'s adapter (when it got that far) and verify the base; True when it had
        to be reloaded."""
        if policy is not None:
            try:
                self.model = policy.unload()
            except Exception:  # noqa: BLE001 - a half-made adapter: the check below decides
                pass
        try:
            intact = fingerprint(self.model, self._key) == self._expected
        except Exception:  # noqa: BLE001 - a model too broken to hash is not intact
            intact = False
        if intact:
            self.model.eval()
            return False
        self.model = None
        self.model = self._fresh()
        self.reloads += 1
        return True
