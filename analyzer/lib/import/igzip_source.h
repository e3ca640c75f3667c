#pragma once
// Gzip input inflated by ISA-L's igzip (Intel's Intelligent Storage Acceleration Library), streaming like
// zlib and about three times as fast: with it, inflating a gzipped Kineto trace no longer outweighs
// parsing it. Built when configure finds libisal (TUNEUP_HAVE_ISAL); else gzipSource uses zlib. Same
// behaviour either way: several members read one after the other, data after the last ignored, errors
// naming the file and the offset in the inflated text. Measured in docs/performance.md.

#include "import/chunk_reader.h"

#include <memory>
#include <string>

namespace tuneup::analysis {

// Whether this program inflates with ISA-L: built with it, and linked with libisal (tuneup-static is not).
bool haveIsal();

// The inflated bytes of `compressed`, through ISA-L; only when haveIsal().
std::unique_ptr<ByteSource> isalGzipSource(std::unique_ptr<ByteSource> compressed, std::string path);

} // namespace tuneup::analysis
