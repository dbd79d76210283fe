"""NumPy adapter: a peer on a NumPy array, without copies.

    x = np.zeros(n, np.float32)
    peer = gcnode.numpy.peer(gcnode.Config("p0.zpl"), x, [("w", (4, 8)), ("b", (8,))])
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import Config, GcnodeError, Layer, Peer


def layers_from_shapes(shapes: Iterable[Tuple[str, Sequence[int]]]) -> List[Layer]:
    """Packed layers from (name, shape): 2-D and higher shapes are matrices
    shape[0] x prod(shape[1:]) (a convolution's out x in*kh*kw), the rest vectors."""
    out, offset = [], 0
    for name, shape in shapes:
        shape = tuple(int(s) for s in shape)
        count = int(np.prod(shape)) if shape else 1
        if len(shape) >= 2:
            out.append(Layer(name, offset, shape[0], count // shape[0], True))
        else:
            out.append(Layer(name, offset, count, 1, False))
        offset += count
    return out


def peer(config: Config, array: np.ndarray,
         shapes: Optional[Iterable[Tuple[str, Sequence[int]]]] = None, **kw: object) -> Peer:
    """A Peer on array (float32, C-contiguous, 1-D or any shape; its memory is
    the model). shapes: the layer table as (name, shape) pairs, or None for
    train/model's table."""
    if not isinstance(array, np.ndarray) or array.dtype != np.float32 or not array.flags.c_contiguous:
        raise GcnodeError("gcnode.numpy.peer: a C-contiguous float32 ndarray is needed", 15, "arg")
    flat = array.reshape(-1)          # a view (contiguous), never a copy
    assert np.shares_memory(flat, array)
    layers = layers_from_shapes(shapes) if shapes is not None else None
    return Peer(config, flat, layers, **kw)
