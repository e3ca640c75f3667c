# Sourced by the scripts: where scripts/install-deps.sh keeps the virtual environment with PyTorch 2.x that
# the Python tests and the demo run on (docs/torch-versions.md). CMake finds it the same way
# (cmake/TuneupDependencies.cmake).
tuneup_venvs=${TUNEUP_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}/tuneup/venvs}
tuneup_torch_version=2.13.0
tuneup_torch_venv=$tuneup_venvs/torch-$tuneup_torch_version-cpu
tuneup_torch_python=$tuneup_torch_venv/bin/python
