#!/usr/bin/env bash
# Installs the dependencies, builds tuneup, records bundled training samples (LibTorch C++ and Python),
# shows what was recorded and the advice on them, and on their --fixed twins. The recordings land in
# ./demo/. Sizes are set for a CPU; on a GPU machine the samples' defaults suit better.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/torch-venv.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$(nproc)" --target tuneup tuneup-agent dataloader_workers
mkdir -p demo
tuneup=build/dev/bin/tuneup

echo "== LibTorch (C++) sample: a slow dataset read by the training thread"
$tuneup record -o demo/cpp-dataloader.db --force -- build/dev/samples/dataloader_workers --steps 30 --load-ms 2
$tuneup info demo/cpp-dataloader.db
$tuneup advise demo/cpp-dataloader.db

echo "== ... and its --fixed twin (4 worker threads)"
$tuneup record -o demo/cpp-dataloader-fixed.db --force -- build/dev/samples/dataloader_workers --steps 30 \
  --load-ms 2 --fixed
$tuneup advise demo/cpp-dataloader-fixed.db

echo "== Python sample: zero_grad(set_to_none=False) and anomaly detection (the bootstrap records both)"
$tuneup record -o demo/python.db --force -- "$tuneup_torch_python" samples/python/train_mlp.py --steps 20 \
  --set-to-none 0 --anomaly
$tuneup advise demo/python.db
