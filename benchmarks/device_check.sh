#!/bin/sh
# What a session lent a device machine (16 CPU cores, one NVIDIA GPU; see
# the developers' guide) runs first, in a few minutes, from the repository
# root:  sh benchmarks/device_check.sh
# The CPU benchmarks against JAX on all the machine's cores (issue 19's
# 16-core measurements), then the reproducibility tests, whose thread
# counts (up to 16) run there on as many cores.  Results go to $OUT
# (the device tool brings that folder back) or benchmarks/results/device.
set -u
out="${OUT:-benchmarks/results/device}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
. benchmarks/carried_pytest.sh   # (pytest from carried wheels, where the image has none)
export JAX_PLATFORMS=cpu TF_CPP_MIN_LOG_LEVEL=3   # JAX's CPU backend, the same run
{ nproc; python -c "import numpy, scipy, jax; print(numpy.__version__, scipy.__version__, jax.__version__)"; cc --version | head -1; } > "$out/machine.txt" 2>&1
timeout 300 python benchmarks/run.py --backends cpu,jax --no-parallel --out "$out" > "$out/run.log" 2>&1
echo "benchmarks: exit $?" >> "$out/machine.txt"
timeout 180 python -m pytest -q -p no:cacheprovider tests/test_reproducible.py > "$out/reproducible.log" 2>&1
echo "reproducibility tests: exit $?" >> "$out/machine.txt"
cat "$out/machine.txt"; grep "x |" "$out/results.md"
