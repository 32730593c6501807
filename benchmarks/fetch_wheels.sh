#!/bin/sh
# Fetches pytest and its pure-Python dependencies as wheels into
# benchmarks/wheels (ignored by git), for a device machine whose image has
# no pytest: the device tool carries them there (carry=["benchmarks/wheels"])
# and benchmarks/carried_pytest.sh puts them on the path.  From the
# repository root:  sh benchmarks/fetch_wheels.sh
# (Python 3.11 or later, as JAX there needs: no tomli or exceptiongroup.)
set -eu
mkdir -p benchmarks/wheels
python -m pip download --quiet --only-binary=:all: --no-deps -d benchmarks/wheels \
  pytest pluggy iniconfig packaging pygments
ls benchmarks/wheels
