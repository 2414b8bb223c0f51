#!/usr/bin/env python3
"""check_pip_install.py SOURCE_ROOT NBG - the route doc/python.md gives a
clone, "pip install", run as written: this interpreter's pip builds the
package from a copy of the source tree with Debian's meson-python
(pyproject.toml, PEP 517) and --no-build-isolation --no-index, so nothing is
fetched, into a temporary --target directory; then a fresh interpreter with
only that directory on PYTHONPATH, started outside the tree, imports nbgkit
from there and reads the sample.

Expected values: the installed package's version is meson.build's project
version (read here as text); the wheel holds the package and its metadata
alone (no nbg, headers or shared library: -Dpython_wheel=true), the
extension exports PyInit__nbgkit alone (the library's copy is inside) and
needs no libnbg.so; the installed package's document of the sample equals
`nbg inspect --json`'s (the command, the oracle of field equality).

Exit 77 (SKIP) with the reason when pip or meson-python is missing for this
interpreter (apt-get install python3-pip python3-mesonpy)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
# what a clone does not hold: build trees, the page's npm packages, caches
IGNORED = shutil.ignore_patterns("build*", ".git", "node_modules", "__pycache__", ".mesonpy*",
                                 "fuzz-out")


def fail(msg):
    print("check_pip_install.py: FAIL: " + msg)
    sys.exit(1)


def main():
    source, nbg = sys.argv[1], sys.argv[2]
    for mod, pkg in (("pip", "python3-pip"), ("mesonpy", "python3-mesonpy")):
        if subprocess.run([sys.executable, "-c", "import " + mod],
                          capture_output=True).returncode:
            print("check_pip_install.py: skipped: %s has no %s (apt-get install %s)"
                  % (sys.executable, mod, pkg))
            return SKIP
    version = re.search(r"project\('nbgkit',.*?version\s*:\s*'([^']+)'",
                        open(os.path.join(source, "meson.build")).read(), re.S).group(1)
    sample = os.path.join(source, "samples", "sample.nb")
    with tempfile.TemporaryDirectory(prefix="nbgkit-pip-") as tmp:
        clone, site = os.path.join(tmp, "clone"), os.path.join(tmp, "site")
        shutil.copytree(source, clone, ignore=IGNORED, symlinks=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
        env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", HOME=tmp)
        cmd = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
               "--no-cache-dir", "--target", site, clone]
        p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
        if p.returncode:
            fail("%s exited %d:\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-4000:],
                                          p.stderr[-4000:]))
        top = sorted(os.listdir(site))
        if top != ["nbgkit", "nbgkit-%s.dist-info" % version]:
            fail("the target holds %s, not the package and its metadata alone" % top)
        ext = [f for f in os.listdir(os.path.join(site, "nbgkit")) if f.startswith("_nbgkit.")]
        if len(ext) != 1:
            fail("not one extension in the package: %s" % ext)
        ext = os.path.join(site, "nbgkit", ext[0])
        if shutil.which("nm"):
            syms = subprocess.run(["nm", "-D", "--defined-only", ext], capture_output=True,
                                  text=True, check=True).stdout.split()
            exported = [s for s in syms if s.startswith(("nbg_", "PyInit"))]
            if exported != ["PyInit__nbgkit"]:
                fail("the extension exports %s besides PyInit__nbgkit" % exported[:8])
        else:
            print("check_pip_install.py: nm is missing: the exported symbols are not checked")
        if shutil.which("ldd"):
            deps = subprocess.run(["ldd", ext], capture_output=True, text=True).stdout
            if "libnbg" in deps:
                fail("the installed extension needs a libnbg shared library:\n" + deps)
        probe = ("import json, sys, nbgkit\n"
                 "m = nbgkit.open(sys.argv[1])\n"
                 "print(json.dumps([nbgkit.__file__, nbgkit.__version__, m.to_dict()]))\n")
        p = subprocess.run([sys.executable, "-I", "-c",
                            "import sys; sys.path.insert(0, %r)\n" % site + probe, sample],
                           cwd=tmp, capture_output=True, text=True)
        if p.returncode:
            fail("the installed package does not import and open the sample:\n" + p.stderr)
        where, got_version, doc = json.loads(p.stdout)
        if not where.startswith(site + os.sep):
            fail("nbgkit was imported from %s, not from the install" % where)
        if got_version != version:
            fail("nbgkit.__version__ is %s; meson.build says %s" % (got_version, version))
        want = json.loads(subprocess.run([nbg, "inspect", "--json", sample], capture_output=True,
                                         check=True).stdout)
        if doc != want:
            fail("the installed package's document of the sample differs from nbg inspect --json")
    print("check_pip_install.py: %s -m pip install --no-build-isolation --target: nbgkit %s "
          "imports from the target, its document of the sample equals nbg's" % (sys.executable,
                                                                                version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
