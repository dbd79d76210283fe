"""ctypes declarations of include/gcnode.h, and where the library comes from."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (POINTER, Structure, c_char_p, c_double, c_float, c_int, c_size_t,
                    c_uint, c_uint32, c_uint64, c_void_p)
from typing import List, Optional

from . import _where

ABI_MAJOR = 0


class GcnodeError(Exception):
    """A libgcnode call failed. str() is gcnode's one-line message; code is
    the project's error code and code_name its name ("config", "io", ...)."""

    def __init__(self, message: str, code: int = 0, code_name: str = ""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.code_name = code_name


class Stats(Structure):
    """gcnode_stats_t."""
    _fields_ = [(name, c_uint64) for name in
                ("round", "msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "deltas_applied",
                 "keyframes_sent", "keyframes_recv", "rejected", "dense_equiv_bytes",
                 "mix_skipped", "mixed_inputs")] + \
              [(name, c_double) for name in
               ("last_wait_s", "total_wait_s", "time_compress_s", "time_sign_s",
                "time_aggregate_s", "time_verify_s", "time_decode_s")] + \
              [(name, c_uint64) for name in
               ("equivocators", "evidence_found", "evidence_recv", "evidence_sent")]


class LayerC(Structure):
    """gcnode_layer_t."""
    _fields_ = [("name", c_char_p), ("offset", c_size_t), ("rows", c_uint32), ("cols", c_uint32),
                ("matrix", c_int)]


def candidates() -> List[str]:
    """Where the library is looked for, in order."""
    out: List[str] = []
    env = os.environ.get("GCNODE_LIB")
    if env:
        out.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    trees = [os.path.normpath(os.path.join(here, "..", "..", "build"))] + list(_where.BUILD_DIRS)
    for tree in trees:
        out.append(os.path.join(tree, "libgcnode.so.%d" % ABI_MAJOR))
    found = ctypes.util.find_library("gcnode")
    out.append(found or "libgcnode.so.%d" % ABI_MAJOR)
    return out


_lib: Optional[ctypes.CDLL] = None


def lib() -> ctypes.CDLL:
    """The loaded library (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        _declare(handle)
        if handle.gcnode_version_number() // 10000 != ABI_MAJOR:
            tried.append("%s (version %s)" % (path, handle.gcnode_version().decode()))
            continue
        _lib = handle
        return _lib
    raise GcnodeError("libgcnode not found; set GCNODE_LIB or build it (cmake --build build). "
                      "Tried: " + "; ".join(tried), 0, "usage")


def _declare(h: ctypes.CDLL) -> None:
    sigs = {
        "gcnode_version": (c_char_p, []),
        "gcnode_version_number": (c_int, []),
        "gcnode_last_error": (c_char_p, []),
        "gcnode_last_error_code": (c_int, []),
        "gcnode_error_name": (c_char_p, [c_int]),
        "gcnode_config_new": (c_void_p, []),
        "gcnode_config_destroy": (None, [POINTER(c_void_p)]),
        "gcnode_config_load": (c_int, [c_void_p, c_char_p]),
        "gcnode_config_set": (c_int, [c_void_p, c_char_p, c_char_p]),
        "gcnode_peer_open": (c_void_p, [c_void_p, POINTER(c_float), c_size_t, POINTER(LayerC),
                                        c_size_t, c_uint]),
        "gcnode_peer_close": (c_int, [POINTER(c_void_p)]),
        "gcnode_peer_step": (c_int, [c_void_p]),
        "gcnode_peer_done": (c_int, [c_void_p]),
        "gcnode_peer_stop": (None, [c_void_p]),
        "gcnode_peer_round": (c_uint64, [c_void_p]),
        "gcnode_peer_n_params": (c_size_t, [c_void_p]),
        "gcnode_peer_index": (c_int, [c_void_p]),
        "gcnode_peer_model": (c_char_p, [c_void_p]),
        "gcnode_peer_report_accuracy": (c_int, [c_void_p, c_double]),
        "gcnode_peer_stats": (c_int, [c_void_p, POINTER(Stats), c_size_t]),
        "gcnode_peer_rejections": (c_int, [c_void_p, c_int, c_char_p, POINTER(c_uint64)]),
        "gcnode_reason_name": (c_char_p, [c_size_t]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(h, name)
        f.restype = res
        f.argtypes = args


def error() -> GcnodeError:
    """The calling thread's last failure as an exception."""
    h = lib()
    code = h.gcnode_last_error_code()
    return GcnodeError(h.gcnode_last_error().decode(errors="replace"), code,
                       h.gcnode_error_name(code).decode())


def check(rc: int) -> None:
    if rc != 0:
        raise error()
