#!/bin/sh
# What a session lent a device machine with an NVIDIA GPU runs (issue 22,
# points 6 and 7), from the repository root:  sh benchmarks/gpu_check.sh
# In under 5 minutes: the GPU tests on the real GPU (through CuPy), every
# generated kernel compiled by nvcc, then benchmarks/run.py with a purejax
# GPU column beside JAX on the same GPU.  Results go to $OUT (the device
# tool brings that folder back) or benchmarks/results/gpu; gpu.md is the
# table to copy to benchmarks/results/gpu.md.  Where the device's image may
# lack pytest, run sh benchmarks/fetch_wheels.sh here first and carry
# benchmarks/wheels with the command.
set -u
out="${OUT:-benchmarks/results/gpu}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
. benchmarks/carried_pytest.sh   # (pytest from carried wheels, where the image has none)
unset JAX_PLATFORMS   # JAX on its default device: the GPU
export TF_CPP_MIN_LOG_LEVEL=3
{ nvidia-smi -L; nproc
  python -c "import numpy, cupy, jax; print(numpy.__version__, cupy.__version__, jax.__version__, jax.devices())"
  python -c "from purejax._src.backends.cuda import gpu_runtime as g; print('purejax sees', g.device_count(), 'GPU(s)')"
} > "$out/machine.txt" 2>&1
if python -c "import pytest" 2>/dev/null; then
  # The real-GPU tests first (the emulation's C++ builds come last).
  timeout 180 python -m pytest -q --maxfail=10 -p no:cacheprovider tests/test_gpu_devices.py \
    tests/test_gpu_linalg.py tests/test_gpu_graphs.py tests/test_cuda_emulation.py > "$out/tests.log" 2>&1
  echo "GPU tests: exit $?" >> "$out/machine.txt"
else
  echo "GPU tests: not run (no pytest on this machine: run sh benchmarks/fetch_wheels.sh here, then carry benchmarks/wheels)" >> "$out/machine.txt"
fi
timeout 240 python benchmarks/run.py --backends gpu,jax --no-parallel --out "$out" \
  > "$out/run.log" 2>&1
echo "benchmarks: exit $?" >> "$out/machine.txt"
# The same workloads that launch many small kernels, replayed as CUDA graphs.
PUREJAX_CUDA_GRAPHS=1 timeout 60 python benchmarks/run.py --backends gpu,jax --no-parallel \
  --only mlp_step,convnet,rnn_scan,lstm_scan,transformer_step --out "$out/graphs" \
  > "$out/graphs.log" 2>&1
echo "benchmarks with CUDA graphs: exit $?" >> "$out/machine.txt"
cp "$out/results.md" "$out/gpu.md" 2>/dev/null
cat "$out/machine.txt"; tail -3 "$out/tests.log"; grep "x |" "$out/results.md" "$out/graphs/results.md"
