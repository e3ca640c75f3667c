#!/usr/bin/env bash
# Builds the GPU bundle: a relocatable folder that checks tuneup on a GPU machine which has only a driver,
# glibc and a Python with a CUDA PyTorch (no compiler, no packages, no network). See docs/gpu-check.md.
#
#   scripts/gpu-bundle.sh [--build BUILD] [--no-build] BUNDLE
#
#   BUNDLE       the folder to write (replaced if it holds an earlier bundle), e.g. gpu-bundle
#   --build DIR  the build tree to take the programs from (default build/gpu-bundle, configured here
#                with -DTUNEUP_BUILD_STATIC_CLI=ON if it is not configured yet)
#   --no-build   take the programs from the build tree as they are (it must hold bin/tuneup-static,
#                lib/libtuneup-agent.so and bin/cuda_check)
#
# Then on the GPU machine: BUNDLE/gpu-check OUT (writes OUT/report.json, OUT/summary.txt and
# OUT/fixtures.tar.gz). JOBS sets the build's parallelism (default: the number of cores).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build/gpu-bundle
do_build=1
dest=
die() { echo "gpu-bundle: $*" >&2; exit 1; }
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) usage ;;
    -*) echo "gpu-bundle: unknown option $1" >&2; usage ;;
    *) [ -z "$dest" ] || usage; dest=$1; shift ;;
  esac
done
[ -n "$dest" ] || usage
python=${PYTHON:-python3}
command -v "$python" >/dev/null || die "$python not found (any Python 3 writes the manifest): set PYTHON"
build=$(mkdir -p "$build" && cd "$build" && pwd)

if [ $do_build = 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
    launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    echo "== configuring $build"
    cmake -S "$src" -B "$build" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DTUNEUP_BUILD_TESTS=ON -DTUNEUP_BUILD_SAMPLES=OFF -DTUNEUP_BUILD_BENCH=OFF -DTUNEUP_BUILD_GUI=OFF \
      -DTUNEUP_BUILD_STATIC_CLI=ON >"$build/gpu-bundle-configure.log" 2>&1 \
      || die "configuring failed (see $build/gpu-bundle-configure.log; scripts/install-deps.sh installs what it needs)"
  fi
  echo "== building tuneup-static, tuneup-agent and cuda_check in $build"
  cmake --build "$build" -j "${JOBS:-$(nproc)}" --target tuneup-static tuneup-agent cuda_check \
    || die "the build failed"
fi

for f in bin/tuneup-static lib/libtuneup-agent.so lib/python/sitecustomize.py lib/python/tuneup_bench.py lib/python/tuneup_sites.py bin/cuda_check; do
  [ -f "$build/$f" ] || die "$build/$f is missing: build the targets tuneup-static, tuneup-agent and cuda_check there (configured with -DTUNEUP_BUILD_STATIC_CLI=ON and the tests), or leave out --no-build"
done

# Written beside the destination, then moved into place: a failed run leaves any earlier bundle whole.
mkdir -p "$(dirname "$dest")"
dest=$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")
if [ -e "$dest" ] && [ ! -f "$dest/MANIFEST.json" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
  die "$dest exists and is not a bundle (no MANIFEST.json): choose another folder or empty it"
fi
tmp=$(mktemp -d "$(dirname "$dest")/.gpu-bundle.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib/python" "$tmp/samples/python" "$tmp/driver"

# Symbols are not needed to run; stripping makes the static tuneup about a seventh smaller.
if command -v strip >/dev/null; then
  strip -o "$tmp/bin/tuneup" "$build/bin/tuneup-static"
  strip -o "$tmp/bin/cuda_check" "$build/bin/cuda_check"
else
  cp "$build/bin/tuneup-static" "$tmp/bin/tuneup"
  cp "$build/bin/cuda_check" "$tmp/bin/cuda_check"
fi
cp "$build/lib/libtuneup-agent.so" "$tmp/lib/"
cp "$build/lib/python/sitecustomize.py" "$build/lib/python/tuneup_bench.py" "$build/lib/python/tuneup_sites.py" "$tmp/lib/python/"
cp "$src"/samples/python/*.py "$tmp/samples/python/"
cp "$src"/scripts/gpu_bundle/{gpu_check.py,bundle_files.py,check_support.py,sample_specs.py,capture_checks.py,probe.py,capture_workload.py,overhead_step.py} "$tmp/driver/"
cp "$src/scripts/gpu_bundle/gpu-check" "$tmp/gpu-check"
chmod 755 "$tmp/gpu-check" "$tmp/bin/tuneup" "$tmp/bin/cuda_check"

version=$("$tmp/bin/tuneup" --version | sed -n 's/^tuneup //p')
[ -n "$version" ] || die "the bundle's tuneup does not run here: $("$tmp/bin/tuneup" --version 2>&1 | head -n 3)"
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git -C "$src" diff --quiet HEAD -- 2>/dev/null; then commit=$commit+changes; fi
"$python" "$tmp/driver/gpu_check.py" --write-manifest "$version:$commit" >/dev/null

bytes=$(du -sb "$tmp" | cut -f1)
limit=$((64 * 1024 * 1024))
[ "$bytes" -le "$limit" ] || die "the bundle is $((bytes / 1048576)) MiB, over the 64 MiB the device tool carries"

rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "gpu-bundle: $dest ($(awk -v b="$bytes" 'BEGIN { printf "%.1f MiB", b / 1048576 }'), tuneup $version, commit $commit)"
"$python" - "$dest/MANIFEST.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for path, b in sorted(m["binaries"].items()):
    print("  %-24s %s" % (path, "static" if b["static"] else "needs glibc %s (%s)" % (b["glibc"], ", ".join(b["needed"]))))
PY
echo "run it: $dest/gpu-check OUT   (OUT/report.json, OUT/summary.txt, OUT/fixtures.tar.gz)"
