#include "advise/call_sites.h"

#include "units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>

namespace tuneup::analysis {

namespace {

// A query walks back over at most this many frames that ended before it (siblings of its enclosing
// frames): the cost stays bounded on traces with millions of short calls.
constexpr size_t kMaxWalk = 4096;

// Python's standard library as the profiler names its files (relative to sys.path): the first path
// component, without ".py". Python 3.8-3.13's pure-Python modules that show up in training and inference.
constexpr std::array kStdlib = { "abc", "argparse", "ast", "asyncio", "bisect", "collections", "concurrent",
    "contextlib", "copy", "copyreg", "dataclasses", "datetime", "decimal", "dis", "enum", "fnmatch", "functools",
    "genericpath", "glob", "gzip", "hashlib", "heapq", "importlib", "inspect", "io", "itertools", "json", "keyword",
    "linecache", "locale", "logging", "multiprocessing", "numbers", "operator", "os", "pathlib", "pickle", "pkgutil",
    "posixpath", "pprint", "queue", "random", "re", "reprlib", "selectors", "shutil", "signal", "socket", "sre_compile",
    "sre_parse", "string", "struct", "subprocess", "tempfile", "textwrap", "threading", "time", "timeit", "token",
    "tokenize", "traceback", "types", "typing", "unittest", "uuid", "warnings", "weakref", "zipfile" };
constexpr std::array kPyTorch = { "torch", "torchvision", "torchaudio", "functorch", "triton" };

} // namespace

namespace {
// The frames of `countByFrame` (names parsePythonFrame reads), the most counted first.
std::vector<SourceSite> rankSites(
    const TraceModel& model, const std::map<StringId, size_t>& countByFrame, size_t total, size_t limit, bool sampled) {
    // One site per line: a line can come under two function names (an inlined function's and its caller's, as
    // the debug information names them); the one with the most events names it.
    struct Line {
        size_t count = 0, mostForOneName = 0;
        std::string_view function;
    };
    using Lines = std::map<std::pair<std::string_view, int64_t>, Line>;
    Lines lines;
    std::vector<Lines::const_iterator> order; // as first met: equal counts keep the frames' order
    for (const auto& [name, count] : countByFrame) {
        const auto frame = parsePythonFrame(model.str(name));
        if (!frame) continue;
        const auto [it, added] = lines.try_emplace({ frame->file, frame->line });
        if (added) order.push_back(it);
        Line& line = it->second;
        line.count += count;
        if (count > line.mostForOneName) {
            line.mostForOneName = count;
            line.function = frame->function;
        }
    }
    std::vector<SourceSite> sites;
    for (const auto& it : order) {
        const auto& [place, line] = *it;
        sites.push_back({ std::string(place.first), place.second, std::string(line.function), line.count,
            double(line.count) / double(total), sampled, {} });
    }
    std::stable_sort(
        sites.begin(), sites.end(), [](const SourceSite& a, const SourceSite& b) { return a.events > b.events; });
    if (sites.size() > limit) sites.resize(limit);
    return sites;
}
} // namespace

std::optional<PythonFrame> parsePythonFrame(std::string_view name) {
    const size_t close = name.find("): ");
    if (close == std::string_view::npos || name.starts_with("<built-in")) return std::nullopt;
    const size_t open = name.rfind('(', close);
    if (open == std::string_view::npos || open == 0) return std::nullopt;
    PythonFrame frame;
    const std::string_view digits = name.substr(open + 1, close - open - 1);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), frame.line);
    if (error != std::errc() || end != digits.data() + digits.size() || frame.line < 0) return std::nullopt;
    frame.file = name.substr(0, open);
    frame.function = name.substr(close + 3);
    return frame;
}

bool isUserFrame(std::string_view file) {
    if (file.empty() || file.front() == '<') return false; // <frozen os>, <string>, <built-in ...>
    // Absolute paths: the interpreter's own library, and installed packages the profiler did not shorten.
    if (file.find("/lib/python") != std::string_view::npos || file.find("/site-packages/") != std::string_view::npos
        || file.find("/dist-packages/") != std::string_view::npos)
        return false;
    const std::string_view first = file.substr(0, file.find('/'));
    const std::string_view module = first.ends_with(".py") ? first.substr(0, first.size() - 3) : first;
    const auto in
        = [module](const auto& names) { return std::find(names.begin(), names.end(), module) != names.end(); };
    return !in(kStdlib) && !in(kPyTorch);
}

CallSites::CallSites(const TraceModel& model)
    : m_model(model) {
    const auto& p = model.pythonFunctions;
    for (size_t i = 0; i < p.size(); ++i) {
        const auto frame = parsePythonFrame(model.str(p.name[i]));
        // The bootstrap's frames are the user's by construction (it knows the interpreter's own paths).
        if (!frame || (p.call[i] == 0 && !isUserFrame(frame->file)) || p.endNs[i] < p.startNs[i]) continue;
        if (p.thread[i] >= m_framesByThread.size()) m_framesByThread.resize(size_t(p.thread[i]) + 1);
        m_framesByThread[p.thread[i]].push_back({ p.startNs[i], p.endNs[i], RowIndex(i) });
    }
    for (auto& frames : m_framesByThread)
        std::stable_sort(
            frames.begin(), frames.end(), [](const Frame& a, const Frame& b) { return a.startNs < b.startNs; });
}

std::optional<std::pair<ThreadIndex, int64_t>> CallSites::issuedAt(const EventRef& event) const {
    const TraceModel& m = m_model;
    const size_t row = size_t(event.row);
    if (event.row == kNoRow) return std::nullopt;
    auto viaLaunch = [&](RowIndex cpuOp, RowIndex apiCall) -> std::optional<std::pair<ThreadIndex, int64_t>> {
        if (apiCall != kNoRow)
            return std::pair { m.apiCalls.thread[size_t(apiCall)], m.apiCalls.startNs[size_t(apiCall)] };
        if (cpuOp != kNoRow) return std::pair { m.cpuOps.thread[size_t(cpuOp)], m.cpuOps.startNs[size_t(cpuOp)] };
        return std::nullopt;
    };
    switch (event.table) {
    case EventTable::Kernel:
        return row < m.kernels.size() ? viaLaunch(m.kernels.cpuOp[row], m.kernels.apiCall[row]) : std::nullopt;
    case EventTable::Memcpy:
        return row < m.memcpys.size() ? viaLaunch(m.memcpys.cpuOp[row], m.memcpys.apiCall[row]) : std::nullopt;
    case EventTable::Memset:
        return row < m.memsets.size() ? viaLaunch(m.memsets.cpuOp[row], m.memsets.apiCall[row]) : std::nullopt;
    case EventTable::Sync:
        return row < m.syncs.size() ? viaLaunch(m.syncs.cpuOp[row], m.syncs.apiCall[row]) : std::nullopt;
    case EventTable::ApiCall:
        return row < m.apiCalls.size() ? viaLaunch(kNoRow, event.row) : std::nullopt;
    case EventTable::CpuOp:
        return row < m.cpuOps.size() ? viaLaunch(event.row, kNoRow) : std::nullopt;
    case EventTable::Annotation:
        if (row < m.annotations.size()) return std::pair { m.annotations.thread[row], m.annotations.startNs[row] };
        return std::nullopt;
    case EventTable::GemmCall:
        if (row < m.gemmCalls.size()) return std::pair { m.gemmCalls.thread[row], m.gemmCalls.startNs[row] };
        return std::nullopt;
    case EventTable::ConvCall:
        if (row < m.convCalls.size()) return std::pair { m.convCalls.thread[row], m.convCalls.startNs[row] };
        return std::nullopt;
    case EventTable::MemoryEvent:
        if (row < m.memoryEvents.size() && m.memoryEvents.thread[row] != kNoThread)
            return std::pair { m.memoryEvents.thread[row], m.memoryEvents.timeNs[row] };
        return std::nullopt;
    case EventTable::Collective:
        break;
    }
    return std::nullopt;
}

RowIndex CallSites::innermostUserFrame(ThreadIndex thread, int64_t timeNs) const {
    if (thread >= m_framesByThread.size()) return kNoRow;
    const auto& frames = m_framesByThread[thread];
    // Frames on a thread nest: of those that started by `timeNs`, the latest still open is the innermost.
    auto it = std::upper_bound(
        frames.begin(), frames.end(), timeNs, [](int64_t t, const Frame& f) { return t < f.startNs; });
    for (size_t walked = 0; it != frames.begin() && walked < kMaxWalk; ++walked) {
        --it;
        if (it->endNs >= timeNs) return it->row;
    }
    return kNoRow;
}

std::vector<SourceSite> CallSites::of(const Evidence& evidence, size_t limit) const {
    if (m_framesByThread.empty()) return {};
    std::map<StringId, size_t> eventsAt; // by the frame's name: file, line and function
    size_t traced = 0;
    for (const EventRef& event : evidence.events) {
        const auto at = issuedAt(event);
        if (!at) continue;
        const RowIndex frame = innermostUserFrame(at->first, at->second);
        if (frame == kNoRow) continue;
        ++eventsAt[m_model.pythonFunctions.name[size_t(frame)]];
        ++traced;
    }
    return rankSites(m_model, eventsAt, traced, limit, false);
}

std::vector<SourceSite> CallSites::ofCalls(const std::vector<std::string>& calls, size_t limit) const {
    std::vector<StringId> wanted;
    for (const std::string& call : calls)
        if (const auto id = m_model.strings.find(call)) wanted.push_back(*id);
    std::map<std::pair<StringId, StringId>, size_t> callsAt; // (frame, call) -> calls
    size_t total = 0;
    const auto& p = m_model.pythonFunctions;
    for (size_t i = 0; i < p.size() && !wanted.empty(); ++i)
        if (p.call[i] != 0 && std::find(wanted.begin(), wanted.end(), p.call[i]) != wanted.end()) {
            ++callsAt[{ p.name[i], p.call[i] }];
            ++total;
        }
    std::map<StringId, size_t> byFrame;
    for (const auto& [key, count] : callsAt)
        byFrame[key.first] += count;
    std::vector<SourceSite> sites = rankSites(m_model, byFrame, total, limit, false);
    // Each line with the call made there (the most made, when several).
    for (SourceSite& site : sites) {
        size_t most = 0;
        for (const auto& [key, count] : callsAt)
            if (const auto frame = parsePythonFrame(m_model.str(key.first));
                frame && frame->file == site.file && frame->line == site.line && count > most) {
                most = count;
                site.call = std::string(m_model.str(key.second));
            }
    }
    return sites;
}

SampledSites sampledSites(const TraceModel& model, std::vector<TimeSpan> spans, size_t limit) {
    const PythonSampleTable& samples = model.pythonSamples;
    if (samples.empty() || spans.empty()) return {};
    std::sort(spans.begin(), spans.end(), [](const TimeSpan& a, const TimeSpan& b) { return a.startNs < b.startNs; });
    std::map<StringId, size_t> samplesAt;
    size_t total = 0;
    // Samples and spans both by time: one walk over the samples from the first span on.
    auto sample = std::lower_bound(samples.timeNs.begin(), samples.timeNs.end(), spans.front().startNs);
    int64_t coveredTo = INT64_MIN; // spans may overlap: a sample counts once
    for (const TimeSpan& span : spans) {
        const int64_t from = std::max(span.startNs, coveredTo);
        if (span.endNs <= from) continue;
        sample = std::lower_bound(sample, samples.timeNs.end(), from);
        for (; sample != samples.timeNs.end() && *sample < span.endNs; ++sample) {
            ++samplesAt[samples.frame[size_t(sample - samples.timeNs.begin())]];
            ++total;
        }
        coveredTo = span.endNs;
    }
    return { rankSites(model, samplesAt, total, limit, true), total };
}

std::string describeSampledSites(const SampledSites& sampled, size_t shown) {
    std::string text;
    for (size_t i = 0; i < sampled.sites.size() && i < shown; ++i) {
        const SourceSite& s = sampled.sites[i];
        text += (i ? "; " : "") + formatPercent(s.share) + " " + s.file + ":" + std::to_string(s.line) + " in "
            + s.function;
    }
    if (!text.empty()) text += " (" + std::to_string(sampled.samples) + " samples)";
    return text;
}

} // namespace tuneup::analysis
