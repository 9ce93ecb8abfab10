"""Peak memory and time of chosen-token log-probs: the output layer then a full ``log_softmax`` vs the kit's
chunked version from the hidden states (``helpers._logprobs.head_token_logprobs``).

    python bench/bench_logprobs.py [--n 8] [--t 384] [--v 151936] [--h 896] [--dtype float32]

Random hidden states and a random output layer stand in for a model's last layer at Qwen's sizes; each
variant runs forward and backward (a weighted sum of the scores, like a loss) in its own process, so its
peak resident memory is its own. "Beyond the inputs" subtracts what the hidden states and the output layer
take (created before measuring). Prints both peaks, their ratio, the seconds and the largest value and
gradient differences; asserts nothing about time or memory.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def _make_inputs(args):
    import torch

    gen = torch.Generator().manual_seed(0)
    dtype = getattr(torch, args.dtype)
    hidden = torch.randn(args.n, args.t, args.h, generator=gen).to(dtype)                      # [N, T, H]
    head = torch.nn.Linear(args.h, args.v, bias=False).to(dtype).requires_grad_(False)
    with torch.no_grad():
        head.weight.copy_(torch.randn(args.v, args.h, generator=gen) * 0.05)                     # [V, H]
    targets = torch.randint(0, args.v, (args.n, args.t), generator=gen)
    weights = torch.randn(args.n, args.t, generator=gen)
    return hidden, head, targets, weights


def _score(variant: str, hidden, head, targets):
    import torch

    from helpers._logprobs import head_token_logprobs

    if variant == "full":
        log_probs = torch.log_softmax(head(hidden).float(), dim=-1)  # [N, T, V]
        return log_probs.gather(-1, targets[..., None]).squeeze(-1)  # [N, T]
    return head_token_logprobs(hidden, head, targets)


def child(args) -> None:
    """One variant: peak memory beyond the logits, seconds, and the outputs for comparison."""
    import torch

    torch.set_num_threads(args.threads)
    hidden, head, targets, weights = _make_inputs(args)
    hidden.requires_grad_(True)
    before = _rss_mb()  # the inputs exist and are touched
    started = time.perf_counter()
    scores = _score(args.variant, hidden, head, targets)
    (scores * weights).sum().backward()
    seconds = time.perf_counter() - started
    peak = _peak_mb() - before
    torch.save({"scores": scores.detach(), "grad": hidden.grad}, args.save)
    logits_mb = args.n * args.t * args.v * hidden.element_size() / 2**20
    print(json.dumps({"peak_mb": peak, "seconds": seconds, "logits_mb": logits_mb}))


def run_variant(args, variant: str, save: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", "--variant", variant, "--save", str(save),
           "--n", str(args.n), "--t", str(args.t), "--v", str(args.v), "--h", str(args.h), "--dtype", args.dtype,
           "--threads", str(args.threads)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--t", type=int, default=384)
    parser.add_argument("--v", type=int, default=151_936)
    parser.add_argument("--h", type=int, default=896)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", default="full", help=argparse.SUPPRESS)
    parser.add_argument("--save", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, str(ROOT))
        child(args)
        return
    import tempfile

    import torch

    with tempfile.TemporaryDirectory() as tmp:
        stats = {v: run_variant(args, v, Path(tmp) / f"{v}.pt") for v in ("full", "chunked")}
        full, chunked = (torch.load(Path(tmp) / f"{v}.pt") for v in ("full", "chunked"))
    logits_mb = stats["full"]["logits_mb"]
    print(f"N={args.n} T={args.t} V={args.v} H={args.h} {args.dtype}; the logits alone would be {logits_mb:.0f} MB "
          f"(CPU, {args.threads} threads)")
    for name, s in stats.items():
        print(f"  {name:8s} peak beyond the inputs {s['peak_mb']:7.0f} MB  {s['seconds']:.2f} s")
    ratio = stats["full"]["peak_mb"] / max(stats["chunked"]["peak_mb"], 1.0)
    print(f"peak memory ratio full / chunked: {ratio:.1f}x")
    print(f"time ratio chunked / full: {stats['chunked']['seconds'] / stats['full']['seconds']:.2f}")
    print(f"max |value difference| {(full['scores'] - chunked['scores']).abs().max().item():.2e}, "
          f"max |gradient difference| {(full['grad'].float() - chunked['grad'].float()).abs().max().item():.2e}")


if __name__ == "__main__":
    main()
