#!/usr/bin/env bash
# Installs the dependencies, builds tuneup, records the bundled training samples (LibTorch C++ and
# Python), shows what was recorded and the advice on them. The recordings land in ./demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$(nproc)" --target tuneup tuneup-agent mlp_training
mkdir -p demo
tuneup=build/dev/bin/tuneup

echo "== LibTorch (C++) sample"
$tuneup record -o demo/mlp.db --force -- build/dev/samples/mlp_training --steps 30
$tuneup info demo/mlp.db
$tuneup advise demo/mlp.db

echo "== Python sample (the bootstrap marks its DataLoader, zero_grad and optimizer steps)"
$tuneup record -o demo/python.db --force -- /usr/bin/python3 samples/python/train_mlp.py --steps 20
$tuneup advise demo/python.db
