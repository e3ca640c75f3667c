#pragma once
// The symbol version a loaded object's reference asks for ("libcublas.so.13" for cublasGemmEx in
// libtorch_cuda.so), read from its dynamic section in memory: what the loader matches definitions by
// when a process holds two major versions of one library.

#include <link.h>
#include <string>

namespace tuneup::agent {

// The version `object` needs for the undefined `symbol`; "" when it refers to the symbol without a
// version, does not refer to it, or its tables cannot be read.
std::string versionNeeded(const link_map* object, const char* symbol);

} // namespace tuneup::agent
