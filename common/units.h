#pragma once
// How tuneup writes numbers for people, in one place: findings, reports, the CLI and the GUI agree.

#include <cstdint>
#include <string>

namespace tuneup {

std::string formatDuration(int64_t ns); // three significant digits: "850 ns", "12.5 us", "61.2 ms", "2.35 s"
std::string formatElapsed(int64_t ns); // wall-clock lengths: "812 ms", "51.3 s", "3 min 12 s", "2 h 5 min"
std::string formatBytes(int64_t bytes); // decimal units, three significant digits: "512 B", "1.5 kB", "38.2 MB"
std::string formatCount(int64_t value); // three significant digits: "950", "12.3 k", "1.42 M"
std::string formatPercent(double share); // a share of 1: "40%", "0.4%"
std::string groupedInteger(int64_t value); // "1,420,113"

} // namespace tuneup
