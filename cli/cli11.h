#pragma once
// CLI11, with GCC 12's false -Wnull-dereference inside its inlined string code silenced.

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>
#pragma GCC diagnostic pop
