#!/bin/sh
# run_pytest.sh -- runs the pytest suite of the Python package bf16emu
# (tests/python/test_*.py) on the package built in the build tree.
#
# The environment (python/local.mk) gives BF16EMU_PYTHON, the interpreter
# configure chose (empty when the package is not built),
# BF16EMU_PYTHONPATH, the built package's folder, and BF16EMU, the built
# tool the tests compare with.  Exit 77 (skipped) when the package is not
# built or pytest or numpy is missing.
srcdir=${srcdir:-.}
here=$srcdir/tests/python

if [ -z "${BF16EMU_PYTHON:-}" ]; then
    echo "run_pytest.sh: SKIP: the Python package is not built (configure" \
         "found no python3 with Python.h, numpy and setuptools, or was" \
         "given --disable-python or --enable-sanitizers)"
    exit 77
fi
if ! "$BF16EMU_PYTHON" -c 'import numpy' >/dev/null 2>&1; then
    echo "run_pytest.sh: SKIP: $BF16EMU_PYTHON cannot import numpy" \
         "(Debian: python3-numpy)"
    exit 77
fi
if ! "$BF16EMU_PYTHON" -c 'import pytest' >/dev/null 2>&1; then
    echo "run_pytest.sh: SKIP: $BF16EMU_PYTHON cannot import pytest" \
         "(Debian: python3-pytest)"
    exit 77
fi
if [ -z "${BF16EMU:-}" ] || [ ! -x "$BF16EMU" ]; then
    echo "run_pytest.sh: the tool \$BF16EMU ('${BF16EMU:-}') is not built" >&2
    exit 99
fi

PYTHONPATH=$BF16EMU_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}
# nothing written into the (possibly read-only) source tree
PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH PYTHONDONTWRITEBYTECODE BF16EMU
exec "$BF16EMU_PYTHON" -m pytest -p no:cacheprovider -q -rs "$here"
