"""PyTorch adapter: gossip a module's parameters without per-round copies.

:class:`TorchPeer` moves the module's parameters once into one contiguous
float32 CPU buffer and makes every parameter a view into it, so optimisers
(and their state, which is keyed by the parameter objects) keep working and
the peer reads and writes the very memory the model uses. Then, in the
field's idiom, either call ``peer.step()`` after ``optimizer.step()`` every
round, or wrap the optimiser::

    peer = TorchPeer(model, gcnode.Config("p0.zpl"))
    opt = GossipOptimizer(torch.optim.SGD(model.parameters(), lr=0.05), peer, gossip_every=4)
    for x, y in loader:
        opt.zero_grad(); F.cross_entropy(model(x), y).backward(); opt.step()
        if peer.done: break
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np
import torch

from . import Config, Layer, Peer


def flatten_parameters(module: torch.nn.Module) -> torch.Tensor:
    """One contiguous float32 tensor holding every parameter of module (in
    module.parameters() order); each parameter's .data becomes a view into
    it. Idempotent: a module already flattened returns its buffer."""
    params = list(module.parameters())
    existing = getattr(module, "_gcnode_flat", None)
    if existing is not None:
        return existing
    for p in params:
        if p.dtype != torch.float32 or p.device.type != "cpu":
            raise TypeError("gcnode.torch: parameters must be float32 on the CPU (%s on %s)"
                            % (p.dtype, p.device))
    total = sum(p.numel() for p in params)
    flat = torch.empty(total, dtype=torch.float32)
    offset = 0
    with torch.no_grad():
        for p in params:
            n = p.numel()
            flat[offset:offset + n].copy_(p.data.reshape(-1))
            p.data = flat[offset:offset + n].view_as(p)
            offset += n
    module._gcnode_flat = flat
    return flat


def layers_of(module: torch.nn.Module) -> List[Layer]:
    """The layer table of module's flattened parameters: a weight of 2 or
    more dimensions is a matrix out x (in * kernel), the rest vectors."""
    out, offset = [], 0
    for name, p in module.named_parameters():
        n = p.numel()
        if p.dim() >= 2:
            out.append(Layer(name[-31:], offset, p.shape[0], n // p.shape[0], True))
        else:
            out.append(Layer(name[-31:], offset, n, 1, False))
        offset += n
    return out


class TorchPeer(Peer):
    """A :class:`gcnode.Peer` on a torch module's parameters.

    table="module": the module's own layer table (every peer must run the
    same architecture; the module's current weights are its initial model,
    announced to the neighbours). table="config": the table of the
    configuration's train/model (a native gcnode model of the same layout,
    e.g. an nn.Sequential of Linear/ReLU for ``784-256-128-10``), whose
    seeded initial weights are written into the module, so that PyTorch and
    native peers gossip together."""

    def __init__(self, module: torch.nn.Module, config: Config, table: str = "module",
                 resume: bool = False):
        if table not in ("module", "config"):
            raise ValueError("table: 'module' or 'config'")
        self.module = module
        self.flat = flatten_parameters(module)
        array = self.flat.numpy()               # shares the tensor's memory
        assert array.ctypes.data == self.flat.data_ptr()
        layers = layers_of(module) if table == "module" else None
        super().__init__(config, array, layers, resume=resume)


class GossipOptimizer(torch.optim.Optimizer):
    """Wraps an optimiser: every ``gossip_every``-th ``step()`` is followed by
    a gossip round of the peer (publish, wait, robust mix into the weights).
    Everything else (param_groups, state, zero_grad, state_dict) is the
    wrapped optimiser's."""

    def __init__(self, optimizer: torch.optim.Optimizer, peer: Peer, gossip_every: int = 1):
        self.optimizer = optimizer
        self.peer = peer
        self.gossip_every = max(1, int(gossip_every))
        self._local = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["optimizer"], name)

    @property
    def param_groups(self) -> List[Dict[str, Any]]:  # type: ignore[override]
        return self.optimizer.param_groups

    @property
    def state(self) -> Dict[Any, Any]:  # type: ignore[override]
        return self.optimizer.state

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optimizer.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> Dict[str, Any]:
        return self.optimizer.state_dict()

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state_dict)

    def step(self, closure: Optional[Any] = None) -> Optional[float]:
        loss = self.optimizer.step(closure)
        self._local += 1
        if self._local % self.gossip_every == 0 and not self.peer.done:
            with torch.no_grad():
                self.peer.step()
        return loss
