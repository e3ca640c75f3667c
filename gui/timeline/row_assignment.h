#pragma once
// Which row of a track each event goes to: nested events (a CPU op inside an NVTX range, a CUDA call
// inside the op) one row below their parent, so that a row never holds two overlapping events. That
// is what lets the level-of-detail pass (lod.h) binary-search a row by start and by end. Pure, no Qt.

#include <cstdint>
#include <span>
#include <vector>

namespace tuneup::gui {

// Rows for events sorted by start, a parent before the children that start with it (ties: longer
// first). An event goes one row below the innermost event still open at its start, so that properly
// nested events get their depth; an event that overlaps without nesting (a range that outlives its
// parent) still lands in a row where it overlaps nothing.
std::vector<uint16_t> assignRows(std::span<const int64_t> starts, std::span<const int64_t> ends);

// The order `assignRows` wants: indices of the events sorted by start, longer first on ties, then by
// `rank` (lower first: the outer kind when two events of different kinds have the same span).
std::vector<uint32_t> nestingOrder(
    std::span<const int64_t> starts, std::span<const int64_t> ends, std::span<const uint8_t> rank);

} // namespace tuneup::gui
