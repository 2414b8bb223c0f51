"""exe_wrapper.py - how a script test starts a program of this build.

In a cross build (cross/*.ini) the programs are built for another machine
and run under the cross file's exe wrapper (qemu-user); tests/meson.build
names it to the script tests in MESON_EXE_WRAPPER, as shell words, the way
meson names it to compiled tests.  command(PROGRAM) is the argv prefix that
runs PROGRAM: the wrapper's words (its program as an absolute path, so a
test may run it with another PATH) and PROGRAM's absolute path.  In a native
build the variable is unset and it is just [PROGRAM].
"""
import os
import shlex
import shutil


def wrapper():
    """The wrapper's words, [] in a native build."""
    words = shlex.split(os.environ.get('MESON_EXE_WRAPPER', ''))
    if words:
        words[0] = shutil.which(words[0]) or words[0]
    return words


def command(program):
    return wrapper() + [os.path.abspath(program)]
