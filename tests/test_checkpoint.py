"""helpers.checkpoint: an interrupted LoRA run resumes to the same weights and history as an
uninterrupted one; broken checkpoints are skipped with one line; saves are atomic."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from helpers import checkpoint, lm

STEPS = 6


def _setup(seed: int = 0):
    """Tiny LoRA policy, AdamW, a linear decay schedule and a step RNG, as the notebooks build them."""
    torch.manual_seed(seed)
    model, tokenizer = lm.load_policy("tiny", "unused/full-model-id", lora=dict(r=4, alpha=8, dropout=0.1))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda done: 1.0 - done / STEPS)
    return model, tokenizer, optimizer, scheduler, random.Random(seed)


def _step(model, tokenizer, optimizer, scheduler, step_rng) -> float:
    """One step that consumes every random source: Python, NumPy, torch (dropout, sampling) and step_rng."""
    vocab = len(tokenizer)
    length = 4 + step_rng.randrange(4) + random.randrange(2) + int(np.random.randint(2))
    ids = torch.randint(vocab, (3, length))
    model.train()
    loss = model(input_ids=ids, labels=ids).loss  # dropout in the LoRA layers draws from torch's RNG
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    return round(loss.item(), 6)


def _lora_weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.named_parameters() if "lora" in k}


def _run(ckpt, stop_after=None, seed=0):
    """Train to STEPS (or stop early, like a runtime that died); resume from ``ckpt`` first."""
    model, tokenizer, optimizer, scheduler, step_rng = _setup(seed)
    state = ckpt.resume(model, optimizer, scheduler, rngs={"steps": step_rng}) if ckpt else checkpoint.Resume()
    history = state.history
    for step in range(state.step, STEPS):
        history.append({"step": step + 1, "loss": _step(model, tokenizer, optimizer, scheduler, step_rng),
                        "lr": scheduler.get_last_lr()[0]})
        if ckpt:
            ckpt.maybe_save(step + 1, model, optimizer, scheduler, history, rngs={"steps": step_rng})
        if stop_after is not None and step + 1 == stop_after:
            return None, history
    return model, history


@pytest.fixture()
def uninterrupted(tiny_model_dir):
    random.seed(1), np.random.seed(1)
    model, history = _run(None)
    return _lora_weights(model), history


def test_resume_reproduces_the_uninterrupted_run(tmp_path, uninterrupted):
    weights, history = uninterrupted
    lines = []
    ckpt = checkpoint.Checkpointer(tmp_path / "run", every=2, keep=2, log=lines.append)
    random.seed(1), np.random.seed(1)
    _run(ckpt, stop_after=5)  # dies after step 5: the last checkpoint is step 4
    assert [p.name for p in ckpt.checkpoints()] == ["step-000002", "step-000004"]
    random.seed(99), np.random.seed(99)  # a fresh runtime: other random states, another model init
    model, resumed_history = _run(ckpt, seed=7)
    assert lines[0] == "checkpoint: none in " + str(tmp_path / "run") + ", starting from step 0"  # outside the cwd
    assert lines[1] == f"checkpoint: resumed from {tmp_path / 'run' / 'step-000004'} (step 4)"
    assert resumed_history == history
    resumed = _lora_weights(model)
    assert resumed.keys() == weights.keys()
    for name in weights:
        assert torch.equal(resumed[name], weights[name]), name
    assert [p.name for p in ckpt.checkpoints()] == ["step-000004", "step-000006"]  # keep=2


def test_corrupt_or_partial_checkpoint_is_skipped_with_one_line(tmp_path, tiny_model_dir):
    lines = []
    ckpt = checkpoint.Checkpointer(tmp_path / "run", every=2, keep=3, log=lines.append)
    _run(ckpt, stop_after=4)
    newest = tmp_path / "run" / "step-000004" / "adapter" / "adapter_model.safetensors"
    newest.write_bytes(newest.read_bytes()[:100])  # a sync that stopped halfway
    (tmp_path / "run" / ".partial-000005-deadbeef").mkdir()  # a save that never finished
    model, tokenizer, optimizer, scheduler, step_rng = _setup()
    lines.clear()
    state = ckpt.resume(model, optimizer, scheduler, rngs={"steps": step_rng})
    assert state.step == 2 and [row["step"] for row in state.history] == [1, 2]
    assert len(lines) == 2
    assert lines[0].startswith(f"checkpoint: ignoring {tmp_path / 'run' / 'step-000004'} "
                               "(adapter/adapter_model.safetensors is 100 bytes")
    assert lines[1].endswith("(step 2)")
    # a state.json cut short is skipped too, and with nothing intact the run starts over
    (tmp_path / "run" / "step-000002" / "state.json").write_text('{"format": 1, "st')
    lines.clear()
    assert ckpt.resume(model, optimizer, scheduler).step == 0
    assert "state.json is unreadable" in lines[1] and lines[-1].endswith("starting from step 0")


def test_an_interrupted_save_leaves_the_previous_checkpoint(tmp_path, tiny_model_dir, monkeypatch):
    ckpt = checkpoint.Checkpointer(tmp_path / "run", every=1, log=lambda line: None)
    model, tokenizer, optimizer, scheduler, step_rng = _setup()
    first = ckpt.save(1, model, optimizer, scheduler, [{"loss": 1.0}])

    def dies(*args, **kwargs):
        raise KeyboardInterrupt  # the runtime stops while trainer.pt is being written

    monkeypatch.setattr(torch, "save", dies)
    with pytest.raises(KeyboardInterrupt):
        ckpt.save(2, model, optimizer, scheduler, [{"loss": 1.0}, {"loss": 0.5}])
    monkeypatch.undo()
    assert ckpt.checkpoints() == [first] and ckpt.latest() == first
    assert not list((tmp_path / "run").glob(".partial-*"))


def test_checkpoint_of_another_model_is_not_loaded(tmp_path, tiny_model_dir):
    lines = []
    ckpt = checkpoint.Checkpointer(tmp_path / "run", log=lines.append)
    plain = torch.nn.Linear(3, 2)
    ckpt.save(3, plain, history=[np.float32(0.5), torch.tensor(2.0)])
    model, *_ = _setup()
    assert ckpt.resume(model).step == 0
    assert "holds full model weights, which does not fit this model" in lines[0]
    other = torch.nn.Linear(3, 2)
    state = ckpt.resume(other)
    assert state.step == 3 and state.history == [0.5, 2.0]
    assert torch.equal(other.weight, plain.weight)


def test_bad_arguments_say_what_to_do(tmp_path, tiny_model_dir):
    with pytest.raises(checkpoint.CheckpointError, match="every must be a whole number of steps >= 1"):
        checkpoint.Checkpointer(tmp_path, every=0)
    ckpt = checkpoint.Checkpointer(tmp_path / "run")
    plain = torch.nn.Linear(2, 2)
    with pytest.raises(checkpoint.CheckpointError, match=r"store tensor values with \.item\(\)"):
        ckpt.save(1, plain, history=[{"loss": object()}])
    with pytest.raises(checkpoint.CheckpointError, match="pass random.Random, torch.Generator"):
        ckpt.save(1, plain, rngs={"bad": 42})
    assert ckpt.checkpoints() == []


def test_for_assignment_puts_checkpoints_under_the_artifacts_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_ARTIFACTS_DIR", str(tmp_path / "art-{assignment}"))
    ckpt = checkpoint.for_assignment("tiny_grpo", every=5)
    assert ckpt.folder == tmp_path / "art-tiny_grpo" / "checkpoints" / "train" and ckpt.every == 5
    with pytest.raises(checkpoint.CheckpointError, match="plain folder name"):
        checkpoint.for_assignment("tiny_grpo", name="../x")
