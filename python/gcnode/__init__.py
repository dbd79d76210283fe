"""gcnode — Byzantine-robust, signed, compressed gossip for a model you train.

A Python binding of libgcnode (include/gcnode.h) over ctypes: nothing is
compiled at install. A :class:`Peer` is a full gcnode peer (the same
configuration file, keys, wire, compression, robust rules, checkpoints,
metrics and control channel as ``gcnode run``) whose model is a float32
buffer you own and train; each :meth:`Peer.step` publishes what changed in
it since the last step, waits for the neighbours as the wait policy says
and writes their robust mix into it, in place.

    import gcnode, gcnode.torch
    peer = gcnode.torch.TorchPeer(model, gcnode.Config("peer0.zpl"))
    opt = gcnode.torch.GossipOptimizer(torch.optim.SGD(model.parameters(), lr=0.05), peer)
    while not peer.done:
        loss = ...; loss.backward(); opt.step(); opt.zero_grad()   # gossips each `gossip_every` steps

Errors raise :class:`GcnodeError` carrying gcnode's message. Threads: a
peer belongs to one thread at a time; :meth:`Peer.stop` and
:meth:`Peer.stats` may be called from any. docs/EMBEDDING.md has the rest.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

from ._lib import GcnodeError, LayerC, Stats, check, error, lib

__all__ = ["Config", "Layer", "Peer", "GcnodeError", "version", "reason_names"]

RESUME = 1
ADOPT = 2


def version() -> str:
    """Version of the loaded libgcnode ("0.1.0")."""
    return lib().gcnode_version().decode()


def reason_names() -> List[str]:
    """Every rejection reason gcnode counts ("bad_signature", "nonfinite", ...)."""
    out, i = [], 0
    while True:
        name = lib().gcnode_reason_name(i)
        if name is None:
            return out
        out.append(name.decode())
        i += 1


class Config:
    """A peer's configuration: a ZPL file (docs/CONFIG.md) and/or keys.

    ``Config("peer0.zpl", **{"gossip/aggregator": "guard"})`` or
    ``Config().set("node/index", 2)``. Every key is checked when set."""

    def __init__(self, path: Optional[str] = None, settings: Optional[Mapping[str, object]] = None,
                 **more: object):
        self._h = ctypes.c_void_p(lib().gcnode_config_new())
        if not self._h:
            raise error()
        if path is not None:
            check(lib().gcnode_config_load(self._h, str(path).encode()))
        for k, v in dict(settings or {}, **more).items():
            self.set(k, v)

    def set(self, key: str, value: object) -> "Config":
        """Set one key, e.g. ``set("gossip/compress", "topk:0.01")``; returns self."""
        if isinstance(value, bool):
            value = "1" if value else "0"
        check(lib().gcnode_config_set(self._h, key.encode(), str(value).encode()))
        return self

    def close(self) -> None:
        if self._h:
            lib().gcnode_config_destroy(ctypes.byref(self._h))

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


@dataclass(frozen=True)
class Layer:
    """One tensor of the flat buffer: ``rows x cols`` floats at ``offset``
    (a matrix, as PowerSGD and per-layer compression see it) or a vector
    (``cols == 1`` and ``matrix`` False)."""
    name: str
    offset: int
    rows: int
    cols: int = 1
    matrix: bool = False

    @property
    def count(self) -> int:
        return self.rows * self.cols


class Peer:
    """One peer on a caller-owned float32 buffer.

    ``params``: anything exposing a writable, C-contiguous float32 buffer
    (a NumPy array; gcnode.torch passes a tensor's memory), kept alive for
    the peer's life and never copied: gcnode reads and writes it only inside
    the constructor and :meth:`step`.

    ``layers``: the layer table (packed, in order), or None for the table of
    the configuration's ``train/model`` (e.g. ``784-256-128-10``: the
    layout native peers of that MLP use). Without a table the seeded initial
    model of train/model is written into params unless ``adopt``; with one,
    params as given is the initial model. ``resume``: continue from the
    newest checkpoint of node/checkpoint_dir (written into params)."""

    def __init__(self, config: Config, params: object, layers: Optional[Sequence[Layer]] = None,
                 resume: bool = False, adopt: bool = False):
        import numpy as np
        arr = np.asarray(params)
        if arr.dtype != np.float32 or not arr.flags.c_contiguous or not arr.flags.writeable:
            raise GcnodeError("params must be a writable, C-contiguous float32 buffer "
                              "(got %s, contiguous=%s, writeable=%s)"
                              % (arr.dtype, arr.flags.c_contiguous, arr.flags.writeable), 15, "arg")
        if isinstance(params, np.ndarray) and not np.shares_memory(arr, params):
            raise GcnodeError("params would be copied", 15, "arg")
        self._params = params
        self._array = arr
        self._config = config               # the library replays it; keep it alive anyway
        self._layers_c = None
        n_layers = 0
        if layers is not None:
            layers = list(layers)
            self._names = [l.name.encode() for l in layers]
            self._layers_c = (LayerC * len(layers))(*[
                LayerC(self._names[i], l.offset, l.rows, l.cols, 1 if l.matrix else 0)
                for i, l in enumerate(layers)])
            n_layers = len(layers)
        flags = (RESUME if resume else 0) | (ADOPT if adopt else 0)
        ptr = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        self._h = ctypes.c_void_p(lib().gcnode_peer_open(config._h, ptr, arr.size, self._layers_c,
                                                         n_layers, flags))
        if not self._h:
            raise error()
        self.start_round = self.round       # > 0 after a resume

    # -- the round ------------------------------------------------------------
    def step(self) -> None:
        """Publish the change since the last step, wait, mix into the buffer."""
        check(lib().gcnode_peer_step(self._handle()))

    @property
    def done(self) -> bool:
        """train/rounds done, or stopped (stop(), the control channel's `stop`)."""
        return bool(lib().gcnode_peer_done(self._handle()))

    def stop(self) -> None:
        """Any thread: end the current wait; done becomes True."""
        lib().gcnode_peer_stop(self._handle())

    # -- what it knows ----------------------------------------------------------
    @property
    def round(self) -> int:
        return int(lib().gcnode_peer_round(self._handle()))

    @property
    def index(self) -> int:
        return int(lib().gcnode_peer_index(self._handle()))

    @property
    def n_params(self) -> int:
        return int(lib().gcnode_peer_n_params(self._handle()))

    @property
    def model(self) -> str:
        """The canonical model spec peers and checkpoints compare."""
        return lib().gcnode_peer_model(self._handle()).decode()

    def report_accuracy(self, accuracy: float) -> None:
        """An accuracy you measured: shown by status, metrics and `status`."""
        check(lib().gcnode_peer_report_accuracy(self._handle(), float(accuracy)))

    def stats(self) -> Dict[str, float]:
        """Counters: round, bytes_sent, dense_equiv_bytes, rejected, time_*_s, ..."""
        s = Stats()
        check(lib().gcnode_peer_stats(self._handle(), ctypes.byref(s), ctypes.sizeof(s)))
        return {name: getattr(s, name) for name, _ in Stats._fields_}

    def rejections(self, peer: int = -1, reason: Optional[str] = None) -> int:
        """Rejected messages claiming to come from peer (index; -1: unattributed)
        for reason (one of reason_names(); None: all)."""
        out = ctypes.c_uint64()
        check(lib().gcnode_peer_rejections(self._handle(), int(peer),
                                           reason.encode() if reason else None, ctypes.byref(out)))
        return int(out.value)

    # -- lifetime -----------------------------------------------------------------
    def close(self) -> None:
        """Final checkpoint and metrics, then teardown (idempotent)."""
        if getattr(self, "_h", None):
            check(lib().gcnode_peer_close(ctypes.byref(self._h)))

    def __enter__(self) -> "Peer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _handle(self) -> ctypes.c_void_p:
        if not self._h:
            raise GcnodeError("peer is closed", 15, "arg")
        return self._h
