"""`pip install ./python` works without the network and without a compiler
(--no-index: nothing is fetched; the package is pure Python over ctypes), and
the installed copy, imported from elsewhere with no GCNODE_LIB, finds the
library of the build tree it was installed from and loads the version the
header promises."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "examples"))
import localnet  # noqa: E402

target = tempfile.mkdtemp(prefix="gc-pip-")
try:
    env = {k: v for k, v in os.environ.items() if k not in ("GCNODE_LIB", "PYTHONPATH")}
    env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                        "--target", target, os.path.join(localnet.SOURCE, "python")],
                       env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        localnet.fail("pip install failed:\n" + r.stdout + r.stderr)
    env["PYTHONPATH"] = target
    code = ("import gcnode, gcnode._lib as L; h = L.lib(); "
            "print(gcnode.version(), gcnode.__file__, h._name)")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=target, timeout=60)
    if r.returncode != 0:
        localnet.fail("import of the installed package failed:\n" + r.stdout + r.stderr)
    version, where, libpath = r.stdout.split()
    print("installed gcnode %s at %s, library %s" % (version, where, libpath))
    header = open(os.path.join(localnet.SOURCE, "include", "gcnode.h")).read()
    want = ".".join(re.search(r"#define GCNODE_VERSION_%s (\d+)" % p, header).group(1)
                    for p in ("MAJOR", "MINOR", "PATCH"))
    if version != want:
        localnet.fail("library version %s, header %s" % (version, want))
    if not where.startswith(target):
        localnet.fail("imported %s, not the installed copy" % where)
    if os.path.realpath(os.path.dirname(libpath)) != os.path.realpath(localnet.BUILD):
        localnet.fail("loaded %s, not the build tree's library" % libpath)
    print("ok")
finally:
    shutil.rmtree(target, ignore_errors=True)
