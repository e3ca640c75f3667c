#!/usr/bin/env bash
# The GPU bundle (scripts/gpu-bundle.sh), assembled from this build tree, moved elsewhere and run here
# without a GPU from an empty environment (ctest label "bundle"): every check a GPU alone can do must say
# "skipped" with the reason, the others must pass, and report.json, summary.txt and fixtures.tar.gz must
# hold what docs/gpu-check.md says. Then a damaged copy: a changed file and a Python without torch must
# each be a clear failure.
#
#   [TUNEUP_BUNDLE_SAMPLES=all|NAME,...] bundle_test.sh SOURCE_DIR BUILD_DIR PYTHON_WITH_TORCH
#
# It records two samples and their twins by default (--samples): zero_grad_fill, whose settings and finding
# a CPU recording holds, and data_parallel, the one launched through DataParallel. pattern_samples_test
# records every sample and holds each to its finding; TUNEUP_BUNDLE_SAMPLES=all checks them all here too,
# and a GPU machine runs them all (gpu-check's default).
set -euo pipefail
samples=${TUNEUP_BUNDLE_SAMPLES:-zero_grad_fill,data_parallel}
src=$1
build=$2
python=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tuneup-bundle-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== assembling the bundle from $build"
PYTHON=$python "$src/scripts/gpu-bundle.sh" --build "$build" --no-build "$tmp/made/gpu-bundle"
bundle=$tmp/elsewhere/bundle
mkdir -p "$tmp/elsewhere"
mv "$tmp/made/gpu-bundle" "$bundle"
rmdir "$tmp/made"
# Nothing the bundle runs names the tree it came from.
if grep -rlF -e "$src/" -e "$build/" "$bundle/driver" "$bundle/samples" "$bundle/lib/python" "$bundle/gpu-check"; then
  fail "the files above name the source or build tree"
fi
size=$(du -sb "$bundle" | cut -f1)
[ "$size" -le $((64 * 1024 * 1024)) ] || fail "the bundle is $size bytes, over 64 MiB"

echo "== running it without a GPU, from an empty environment"
start=$(date +%s)
status=0
(cd "$tmp" && env -i PATH=/usr/bin:/bin HOME="$tmp" PYTHON="$python" "$bundle/gpu-check" "$tmp/out" --budget 1000 \
  --samples "$samples") \
  >"$tmp/run.log" 2>&1 || status=$?
cat "$tmp/run.log"
echo "gpu-check took $(($(date +%s) - start)) s and exited $status"
[ $status -eq 0 ] || fail "gpu-check exited $status (0 wanted: no check may fail here)"

"$python" - "$tmp/out" "$samples" <<'PY'
import json, os, sqlite3, sys, tarfile, tempfile

out = sys.argv[1]
report = json.load(open(os.path.join(out, "report.json")))
errors = []
def want(condition, text):
    if not condition:
        errors.append(text)

want(report.get("gpu", "missing") is None, "gpu must be null without a GPU: %r" % report.get("gpu"))
checks = report["checks"]
names = [c["name"] for c in checks]
want(len(names) == len(set(names)), "check names repeat")
by_name = {}
for c in checks:
    want(set(c) == {"name", "status", "detail"}, "check %r has keys %s" % (c.get("name"), sorted(c)))
    want(c["status"] in ("pass", "fail", "skipped"), "%s: status %r" % (c["name"], c["status"]))
    want(isinstance(c["detail"], str) and c["detail"], "%s: no detail" % c["name"])
    want(c["status"] != "fail", "%s failed: %s" % (c["name"], c["detail"]))
    by_name[c["name"]] = c

all_samples = ["cudnn_autotuner", "zero_grad_fill", "unaligned_linear", "dataloader_workers", "anomaly",
               "pageable_copy", "cpu_tensor_copy", "conv_bias_bn", "amp", "data_parallel"]
samples = all_samples if sys.argv[2] == "all" else sys.argv[2].split(",")
chosen = lambda names: [s for s in names if s in samples]
must_pass = ["bundle: files intact", "bundle: runs on this machine's glibc", "bundle: tuneup runs",
             "machine: Python with torch", "capture: recorded", "capture: Python bootstrap ranges and facts",
             "capture: torch settings", "capture: nothing dropped", "capture: main thread sampled",
             "capture: no GPU memory read without CUDA", "fixtures: recordings kept"]
must_pass += ["sample %s: signal" % s for s in chosen(["data_parallel"])]
must_pass += ["sample %s: recorded" % s for s in samples]
must_pass += ["sample %s: settings" % s for s in chosen(["cudnn_autotuner", "zero_grad_fill", "dataloader_workers",
                                                          "anomaly", "data_parallel"])]
# The rules whose signal a CPU recording holds fire on the sample and not on its twin.
must_pass += ["sample %s: finding" % s for s in chosen(["zero_grad_fill", "dataloader_workers", "anomaly",
                                                         "conv_bias_bn"])]
for s in all_samples:
    if s not in samples:
        left = by_name.get("sample %s: recorded" % s, {})
        want(left.get("status") == "skipped" and left.get("detail") == "left out by --samples",
             "sample %s, not chosen, must say it was left out: %s" % (s, left))
for name in must_pass:
    want(by_name.get(name, {}).get("status") == "pass", "%s must pass here: %s" % (name, by_name.get(name)))
needs_gpu = ["capture: GPU capture on", "capture: kernels", "capture: memcpys (pageable, pinned, DtoH)",
             "capture: memsets", "capture: syncs", "capture: event queries are not syncs", "capture: CUDA API calls",
             "capture: GEMM shapes (cuBLAS/cuBLASLt)", "capture: cuDNN convolutions", "capture: NVTX ranges and marks",
             "capture: GPU memory (CUPTI, the allocator's peaks, capacity)", "capture: memory-headroom evaluated",
             "cuda_check: driver API kernels, copies, memset, syncs", "torch.profiler halfway: the run survives",
             "torch.profiler halfway: lost capture is reported", "overhead: tuneup record on a ResNet-style step",
             ] + ["sample %s: finding" % s for s in chosen(["cudnn_autotuner"])] + [
             "sample %s: signal" % s for s in chosen(["amp", "unaligned_linear"])]
for name in needs_gpu:
    c = by_name.get(name)
    want(c is not None and c["status"] == "skipped" and c["detail"].startswith("no GPU: "),
         "%s must be skipped, saying there is no GPU: %s" % (name, c))
overhead = report.get("overhead") or {}
want(set(overhead.get("step_ms_median_per_run", {})) == {"plain", "tuneup", "profiler"},
     "the overhead measurement ran its three variants on the CPU: %s" % overhead)

summary = open(os.path.join(out, "summary.txt")).read()
want("0 failed" in summary and "GPU: none" in summary, "summary.txt: %s" % summary[-300:])

fixtures = report["fixtures"]
want(not fixtures["left_out"], "fixtures left out: %s" % fixtures["left_out"])
with tarfile.open(os.path.join(out, "fixtures.tar.gz")) as archive, tempfile.TemporaryDirectory() as unpacked:
    members = set(archive.getnames())
    wanted = {"capture/capture.db", "overhead/tuneup.db"} | {
        "samples/%s/%s.db" % (s, kind) for s in samples for kind in ("broken", "fixed")}
    want(wanted <= members, "fixtures.tar.gz lacks %s" % sorted(wanted - members))
    archive.extract("capture/capture.db", unpacked)
    db = sqlite3.connect(os.path.join(unpacked, "capture", "capture.db"))
    want(db.execute("select value from meta where key = 'format'").fetchone() is not None, "capture.db has no meta")
    want(db.execute("select count(*) from nvtx_ranges").fetchone()[0] > 0, "capture.db has no ranges")
want(sorted(os.listdir(out)) == ["fixtures.tar.gz", "report.json", "summary.txt"],
     "OUT holds %s (the device tool brings back 8 files at most)" % sorted(os.listdir(out)))

if errors:
    print("\n".join("FAIL: " + e for e in errors))
    sys.exit(1)
print("report.json: %d checks (%d pass, %d skipped), as wanted" % (
    len(checks), sum(c["status"] == "pass" for c in checks), sum(c["status"] == "skipped" for c in checks)))
PY

echo "== a damaged copy: a changed file, and a Python without torch"
cp -r "$bundle" "$tmp/damaged"
echo "# changed" >>"$tmp/damaged/samples/python/amp.py"
status=0
env -i PATH=/usr/bin:/bin HOME="$tmp" PYTHON="$python" "$tmp/damaged/gpu-check" "$tmp/out2" --python /bin/false \
  >"$tmp/run2.log" 2>&1 || status=$?
[ $status -eq 1 ] || { cat "$tmp/run2.log"; fail "gpu-check on a damaged bundle exited $status, 1 wanted"; }
"$python" - "$tmp/out2/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
checks = {c["name"]: c for c in report["checks"]}
intact = checks["bundle: files intact"]
assert intact["status"] == "fail" and "samples/python/amp.py changed" in intact["detail"], intact
machine = checks["machine: Python with torch"]
assert machine["status"] == "fail" and "/bin/false cannot run the probe" in machine["detail"] \
    and "--python" in machine["detail"], machine
assert not any(name.startswith(("capture", "sample")) for name in checks), "recorded without a Python with torch"
assert any("cannot import torch" in n for n in report["notes"]), report["notes"]
print("damaged bundle: %s | %s" % (intact["detail"], machine["detail"]))
PY
echo "PASS"
