"""The network's share of the PPO trainer's time, and its FLOP rate beside a plain matrix multiply of the same shapes.

:class:`NetworkClock` times the policy network during whole updates with hooks that only read
the clock: its forward passes (module forward pre/post hooks), its backward passes (from the
first gradient of its outputs, :func:`torch.autograd.graph.register_multi_grad_hook`, to the
last gradient accumulated into its parameters) and the optimizer's steps (step pre/post hooks).
It counts the rows of every forward pass, and right after each clocked update runs
:class:`PlainMultiplies` of that update's passes (``torch.addmm``/``torch.mm`` on the same
shapes: each Linear layer's forward and, where trained, its weight and input gradients) once,
timed, in the same process and torch threads, so both meet the same load on a shared machine.
:func:`profile` counts the passes' FLOPs with :class:`~torch.utils.flop_counter.FlopCounterMode`
on a meta copy of the network (nothing computed, nothing changed). The benchmark's trainer runs
on the CPU, where the clock reads finished work.
"""

from __future__ import annotations

import copy
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from typing import TYPE_CHECKING, TypedDict

import torch
from torch import nn
from torch.autograd.graph import register_multi_grad_hook
from torch.utils.flop_counter import FlopCounterMode

if TYPE_CHECKING:
    from agents.policy import PolicyNet
    from training.ppo import PPOTrainer

Batch = tuple[int, bool]
"""A network pass's shape: its rows, and whether it was trained on (a forward with a backward)."""


class NetworkBatch(TypedDict):
    """One shape of network pass in the clocked updates: its calls, and its FLOPs on the network and the multiplies."""

    rows: int
    backward: bool
    calls: int
    flops: int
    """Per call, counted on the network."""
    matmul_flops: int
    """Per call, counted on the plain multiplies (the same number)."""


class NetworkProfile(TypedDict):
    """Where the clocked PPO updates spent their time, and the network's FLOP rate beside plain multiplies."""

    updates: int
    decisions_per_s: float
    """The clocked updates' rate (compare the plain updates' to see the clock's cost)."""
    seconds: float
    """Wall time of the clocked updates."""
    collect_s: float
    """Up to the first training forward pass: the rollout (engine, observations, sampling) and its advantages."""
    train_s: float
    """From the first training forward pass to the update's end."""
    forward_collect_s: float
    forward_train_s: float
    backward_s: float
    optimizer_s: float
    network_s: float
    """Forward, backward and optimizer seconds together."""
    share: float
    """``network_s / seconds``."""
    flops: int
    flop_per_s: float
    """``flops / network_s``."""
    matmul_flop_per_s: float
    """The plain multiplies of the same passes, each clocked update's right after it."""
    matmul_fraction: float
    """``flop_per_s / matmul_flop_per_s``: the multiplies' seconds over the network's."""
    matmul_seconds: float
    """The plain multiplies' seconds, all clocked updates' passes."""
    threads: int
    batches: list[NetworkBatch]


class NetworkClock:
    """Seconds of a trainer's network work in the updates it clocks (:meth:`update`), and the rows of its passes."""

    def __init__(self, learner: PPOTrainer) -> None:
        self.learner = learner
        self.multiplies = PlainMultiplies(learner.net)
        self.params = [p for p in learner.net.parameters() if p.requires_grad]
        self.updates = self.decisions = 0
        self.seconds = self.collect = self.train = 0.0
        self.forward_collect = self.forward_train = self.backward = self.optimizer = 0.0
        self.batches: Counter[Batch] = Counter()
        self._started = self._backward_started = 0.0
        self._first_train: float | None = None
        self._left = 0

    def update(self) -> None:
        """One whole update of the trainer with the hooks on, then its passes' plain multiplies.

        The update's wall time is split at its first training forward pass.
        """
        step, passes = self.learner.global_step, self.batches.copy()
        self._first_train = None
        with self._hooks():
            start = time.perf_counter()
            self.learner.iterate()
            end = time.perf_counter()
        split = end if self._first_train is None else self._first_train
        self.collect += split - start
        self.train += end - split
        self.seconds += end - start
        self.decisions += self.learner.global_step - step
        self.updates += 1
        self.multiplies.run(self.batches - passes)

    @contextmanager
    def _hooks(self) -> Iterator[None]:
        """The clock's hooks on the network, its parameters and the optimizer, removed on leaving."""
        net, opt = self.learner.net, self.learner.opt
        with ExitStack() as stack:
            for handle in (
                net.register_forward_pre_hook(self._forward_starts),
                net.register_forward_hook(self._forward_ends),
                opt.register_step_pre_hook(self._step_starts),
                opt.register_step_post_hook(self._step_ends),
                *(p.register_post_accumulate_grad_hook(self._accumulated) for p in self.params),
            ):
                stack.enter_context(handle)
            yield

    def _forward_starts(self, module: nn.Module, args: tuple[torch.Tensor, ...]) -> None:
        """Note the start of a forward pass."""
        self._started = time.perf_counter()

    def _forward_ends(self, module: nn.Module, args: tuple[torch.Tensor, ...], out: tuple[torch.Tensor, ...]) -> None:
        """Add a forward pass's seconds and rows; a training pass also watches for its outputs' first gradient."""
        seconds = time.perf_counter() - self._started
        training = torch.is_grad_enabled()
        self.batches[args[0].shape[0], training] += 1
        if not training:
            self.forward_collect += seconds
            return
        self.forward_train += seconds
        if self._first_train is None:
            self._first_train = self._started
        register_multi_grad_hook(out, self._backward_starts, mode="any")

    def _backward_starts(self, grad: torch.Tensor) -> None:
        """Note the start of the network's backward pass: the first gradient of its outputs."""
        self._backward_started, self._left = time.perf_counter(), len(self.params)

    def _accumulated(self, param: torch.Tensor) -> None:
        """Count a parameter's gradient; the last one ends the backward pass."""
        self._left -= 1
        if not self._left:
            self.backward += time.perf_counter() - self._backward_started

    def _step_starts(self, opt: torch.optim.Optimizer, args: object, kwargs: object) -> None:
        """Note the start of an optimizer step."""
        self._started = time.perf_counter()

    def _step_ends(self, opt: torch.optim.Optimizer, args: object, kwargs: object) -> None:
        """Add an optimizer step's seconds."""
        self.optimizer += time.perf_counter() - self._started


def linear_layers(net: nn.Module) -> list[nn.Linear]:
    """The network's Linear layers in module order (the first one reads the observations)."""
    return [m for m in net.modules() if isinstance(m, nn.Linear)]


def network_flops(net: PolicyNet, batch: Batch) -> int:
    """FLOPs of one pass of ``net`` of shape ``batch``, counted by FlopCounterMode on a meta copy.

    A trained pass is a forward and a backward whose input is data (no gradient of its own), as in training.
    """
    rows, backward = batch
    meta = copy.deepcopy(net).to("meta")
    with FlopCounterMode(display=False) as counter, torch.set_grad_enabled(backward):
        logits, value = meta(torch.zeros(rows, net.obs_size, device="meta"))
        if backward:
            (logits.sum() + value.sum()).backward()
    return counter.get_total_flops()


def matmuls(net: nn.Module, batch: Batch) -> list[Callable[[], torch.Tensor]]:
    """The plain multiplies of one pass of shape ``batch``, in nn.Linear's layouts.

    Each Linear layer's forward ``addmm``; where trained, its weight gradient and (but the first
    layer's, whose input is data) its input gradient.
    """
    rows, backward = batch
    gen = torch.Generator().manual_seed(0)  # torch's global generator stays untouched
    ops: list[Callable[[], torch.Tensor]] = []
    for i, layer in enumerate(linear_layers(net)):
        w, b = (torch.randn(*shape, generator=gen) for shape in (layer.weight.shape, layer.bias.shape))
        x, g = (torch.randn(rows, width, generator=gen) for width in (layer.in_features, layer.out_features))
        ops.append(partial(torch.addmm, b, x, w.t()))
        if backward:
            ops += [partial(torch.mm, g.t(), x), *([partial(torch.mm, g, w)] if i else [])]
    return ops


class PlainMultiplies:
    """``torch.addmm``/``torch.mm`` of a network's pass shapes (:func:`matmuls`): their FLOPs and timed runs."""

    def __init__(self, net: nn.Module) -> None:
        self.net = net
        self.ops: dict[Batch, list[Callable[[], torch.Tensor]]] = {}
        self.flops: dict[Batch, int] = {}
        """Per pass, counted by FlopCounterMode on a shape's first, untimed run."""
        self.seconds = 0.0

    def run(self, passes: Counter[Batch]) -> None:
        """Run the multiplies of ``passes`` (shape: count) once, adding their seconds."""
        for batch in passes.keys() - self.ops.keys():
            self.ops[batch] = matmuls(self.net, batch)
            with FlopCounterMode(display=False) as counter:
                for op in self.ops[batch]:
                    op()
            self.flops[batch] = counter.get_total_flops()
        start = time.perf_counter()
        for batch, count in passes.items():
            for _ in range(count):
                for op in self.ops[batch]:
                    op()
        self.seconds += time.perf_counter() - start


def profile(clock: NetworkClock) -> NetworkProfile:
    """The clocked updates' figures beside their plain multiplies'."""
    net, multiplies = clock.learner.net, clock.multiplies
    batches: list[NetworkBatch] = [
        {
            "rows": rows,
            "backward": backward,
            "calls": calls,
            "flops": network_flops(net, (rows, backward)),
            "matmul_flops": multiplies.flops[rows, backward],
        }
        for (rows, backward), calls in sorted(clock.batches.items())
    ]
    total = sum(b["calls"] * b["flops"] for b in batches)
    network_s = clock.forward_collect + clock.forward_train + clock.backward + clock.optimizer
    flop_per_s = total / network_s
    matmul_flop_per_s = sum(b["calls"] * b["matmul_flops"] for b in batches) / multiplies.seconds
    return {
        "updates": clock.updates,
        "decisions_per_s": clock.decisions / clock.seconds,
        "seconds": clock.seconds,
        "collect_s": clock.collect,
        "train_s": clock.train,
        "forward_collect_s": clock.forward_collect,
        "forward_train_s": clock.forward_train,
        "backward_s": clock.backward,
        "optimizer_s": clock.optimizer,
        "network_s": network_s,
        "share": network_s / clock.seconds,
        "flops": total,
        "flop_per_s": flop_per_s,
        "matmul_flop_per_s": matmul_flop_per_s,
        "matmul_fraction": flop_per_s / matmul_flop_per_s,
        "matmul_seconds": multiplies.seconds,
        "threads": torch.get_num_threads(),
        "batches": batches,
    }
