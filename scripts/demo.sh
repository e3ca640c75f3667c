#!/usr/bin/env bash
# Installs the dependencies, builds tuneup, records the bundled LibTorch training sample, shows what
# was recorded and the advice on it. The recording lands in ./demo/mlp.db.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$(nproc)" --target tuneup tuneup-agent mlp_training
mkdir -p demo
build/dev/bin/tuneup record -o demo/mlp.db --force -- build/dev/samples/mlp_training --steps 30
build/dev/bin/tuneup info demo/mlp.db
build/dev/bin/tuneup advise demo/mlp.db
