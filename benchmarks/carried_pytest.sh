# Sourced by gpu_check.sh and device_check.sh: where the machine's Python
# has no pytest, the wheels carried in benchmarks/wheels (fetch_wheels.sh)
# are unpacked and put on PYTHONPATH (all pure Python: nothing is installed).
if ! python -c "import pytest" 2>/dev/null && ls benchmarks/wheels/*.whl > /dev/null 2>&1; then
  carried="${TMPDIR:-/tmp}/purejax-carried-site"
  for wheel in benchmarks/wheels/*.whl; do python -m zipfile -e "$wheel" "$carried"; done
  export PYTHONPATH="$carried${PYTHONPATH:+:$PYTHONPATH}"
fi
