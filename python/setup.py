# setup.py -- builds the Python package bf16emu and its C extension
# bf16emu._ext from a configured and built bf16emu tree.
#
# The extension links the three convenience libraries that make up
# libbf16emu (softfloat/, attention/, analysis/; their position-independent
# archives under .libs/), so the installed module needs no libbf16emu.so
# at run time, only the shared libraries libbf16emu itself links (jansson,
# MPFR, GMP, zlib).  `make` runs this script with the tree's paths and
# flags in the environment:
#   BF16EMU_SRCDIR    the source tree (headers), default: this folder's parent
#   BF16EMU_BUILDDIR  the build tree (config.h, the .libs archives),
#                     default: BF16EMU_SRCDIR
#   BF16EMU_CFLAGS    extra compiler flags (OpenMP), default none
#   BF16EMU_LIBS      the libraries libbf16emu links, default
#                     "-ljansson -lmpfr -lgmp -lz -lm"
# so `pip install --no-build-isolation ./python` works from a tree built
# in place.
#
# The module bf16emu.capture is the source tree's experiments/gpu/
# capture.py, copied unchanged into the built package (it needs torch
# when imported; `import bf16emu` does not import it).
import os
import shlex

import numpy
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

here = os.path.dirname(os.path.abspath(__file__))
# sources and packages relative to this folder, wherever the build runs
os.chdir(here)
srcdir = os.path.abspath(os.environ.get("BF16EMU_SRCDIR") or
                         os.path.join(here, ".."))
builddir = os.path.abspath(os.environ.get("BF16EMU_BUILDDIR") or srcdir)
cflags = shlex.split(os.environ.get("BF16EMU_CFLAGS", ""))
libs = shlex.split(os.environ.get("BF16EMU_LIBS") or
                   "-ljansson -lmpfr -lgmp -lz -lm")

archives = [os.path.join(builddir, layer, ".libs", "lib%s.a" % layer)
            for layer in ("analysis", "attention", "softfloat")]
for a in archives:
    if not os.path.exists(a):
        raise SystemExit("bf16emu: %s not found: configure and build the "
                         "library first (./configure && make), or set "
                         "BF16EMU_BUILDDIR to the build tree" % a)

capture = os.path.join(srcdir, "experiments", "gpu", "capture.py")
if not os.path.exists(capture):
    raise SystemExit("bf16emu: %s not found: BF16EMU_SRCDIR must name the "
                     "source tree" % capture)


class BuildPy(build_py):
    """build_py, and experiments/gpu/capture.py as bf16emu/capture.py."""

    def run(self):
        super().run()
        self.copy_file(capture, os.path.join(self.build_lib, "bf16emu",
                                             "capture.py"))


ext = Extension(
    "bf16emu._ext",
    sources=["src/bf16emu_ext.c", "src/ext_common.c", "src/ext_values.c",
             "src/ext_mma.c", "src/ext_kernels.c", "src/ext_attention.c",
             "src/ext_diff.c", "src/ext_trace.c"],
    depends=["src/ext.h"],
    include_dirs=[srcdir, builddir, os.path.join(srcdir, "softfloat"),
                  os.path.join(srcdir, "attention"), numpy.get_include()],
    extra_compile_args=["-std=c11", "-ffp-contract=off"] + cflags,
    extra_objects=archives,
    extra_link_args=cflags + libs,
)

setup(
    name="bf16emu",
    version=os.environ.get("BF16EMU_VERSION", "0.1.0"),
    description="bit-exact emulation of BF16, FP16, FP8 arithmetic, "
                "matrix units and flash attention",
    packages=["bf16emu"],
    package_dir={"bf16emu": "bf16emu"},
    ext_modules=[ext],
    cmdclass={"build_py": BuildPy},
    python_requires=">=3.8",
    install_requires=["numpy"],
)
