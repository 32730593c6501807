#!/bin/sh
# Generated native code never reads or writes out of bounds: every kernel
# compiled with AddressSanitizer (through $CC, into a kernel cache of its
# own), the sanitizer's runtime preloaded into Python, then the
# differential fuzz (the C backend, then the GPU kernels' emulation) and the
# kernel-heavy test files.  JAX is masked (its C++ runtime does not run
# under a preloaded sanitizer), so oracle tests skip.  Any report lands in
# $OUT/asan.*; about 12 minutes on 2 cores:  sh benchmarks/asan_check.sh
set -u
out="${OUT:-/tmp/purejax-asan}"
mkdir -p "$out/nojax/jax"
asan=$(gcc -print-file-name=libasan.so)
stdcxx=$(readlink -f "$(gcc -print-file-name=libstdc++.so)")   # (C++ exceptions under ASan)
if [ ! -e "$asan" ]; then echo "no libasan for gcc here"; exit 2; fi
echo 'raise ModuleNotFoundError("JAX is masked under AddressSanitizer", name="jax")' \
  > "$out/nojax/jax/__init__.py"
rm -f "$out"/asan.*
export ASAN_OPTIONS="detect_leaks=0:handle_segv=0:log_path=$out/asan"
export CC="gcc -fsanitize=address -fno-omit-frame-pointer"
export PUREJAX_CACHE_DIR="$out/kernels" PUREJAX_COMPILE_SYNC=1
export PYTHONPATH="$out/nojax:$PWD${PYTHONPATH:+:$PYTHONPATH}"
run() { LD_PRELOAD="$asan $stdcxx" "$@"; }
( cd benchmarks &&
  run python fuzz.py --programs 1000 --seed 301 --per-batch 10 --jobs 2 &&
  run python fuzz.py --programs 1000 --seed 302 --x64 --per-batch 10 --jobs 2 &&
  run python fuzz.py --programs 600 --seed 304 --target cuda_emulation --per-batch 10 --jobs 2
) > "$out/fuzz.log" 2>&1
echo "fuzz: exit $?"
# (nvcc itself does not run with the sanitizer preloaded, and a compile
# timing test measures a compiler slowed down by it)
run python -m pytest -q -n 2 -p no:cacheprovider -W ignore::RuntimeWarning \
  --deselect tests/test_cuda_emulation.py::test_generated_sources_compile_with_nvcc \
  --deselect tests/test_cpu_toolchain.py::test_exit_during_a_background_compile_leaves_nothing_behind \
  tests/test_cpu_*.py tests/test_lax_gather_scatter.py tests/test_indexing.py \
  tests/test_lax_windowed.py tests/test_lax_conv.py tests/test_lax_sort.py \
  tests/test_lax_cumulative.py tests/test_cumulative_accuracy.py tests/test_scan_in_place.py \
  tests/test_lax_select_and_scatter.py tests/test_numpy_reductions.py \
  tests/test_wrong_answers_fuzzed.py tests/test_lapack_layouts.py tests/test_lapack_host_steps.py \
  tests/test_random.py tests/test_fft.py tests/test_product_layout.py \
  tests/test_ragged_all_to_all.py tests/test_cuda_emulation.py tests/test_cuda_indexing.py \
  tests/test_cuda_complex.py > "$out/tests.log" 2>&1
echo "tests: exit $?"
tail -1 "$out/tests.log"; grep "^[0-9]* programs" "$out/fuzz.log"
if ls "$out"/asan.* > /dev/null 2>&1; then
  echo "AddressSanitizer reports:"; ls "$out"/asan.*; exit 1
fi
echo "no AddressSanitizer report"
