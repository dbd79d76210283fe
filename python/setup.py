"""gcnode: Python binding of libgcnode (ctypes; nothing to compile).

    pip install ./python          # from the repository, no network needed

The package finds libgcnode.so through GCNODE_LIB, then the build tree it
was installed from (recorded here at install time) or the source tree it is
imported from, then the system's library path (docs/EMBEDDING.md)."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class _build_py(build_py):
    """Record where the repository's build tree is, for an installed copy."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "gcnode", "_where.py")
        with open(target, "w") as f:
            f.write("BUILD_DIRS = [%r]\n" % os.path.normpath(os.path.join(HERE, "..", "build")))


setup(
    name="gcnode",
    version="0.1.0",
    description="Byzantine-robust, signed, compressed gossip for models you train (libgcnode binding)",
    packages=["gcnode"],
    package_data={"gcnode": ["py.typed"]},
    python_requires=">=3.8",
    install_requires=[],
    extras_require={"numpy": ["numpy"], "torch": ["torch", "numpy"]},
    cmdclass={"build_py": _build_py},
)
