#include "run_files.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <tuple>

namespace tuneup {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kExtension = ".db";

// Strips ".<tag><digits>" from the end of `text`, returning the number.
std::optional<int> takeNumberedPart(std::string_view& text, std::string_view tag) {
    const size_t dot = text.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    const std::string_view part = text.substr(dot + 1);
    if (!part.starts_with(tag) || part.size() == tag.size() || part.size() > tag.size() + 9) return std::nullopt;
    int value = 0;
    const char* first = part.data() + tag.size();
    const char* last = part.data() + part.size();
    const auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || end != last || value < 0) return std::nullopt;
    text = text.substr(0, dot);
    return value;
}

} // namespace

std::string RunFileName::path() const {
    std::string out = stem;
    if (rank) out += ".rank" + std::to_string(*rank);
    if (pid) out += ".pid" + std::to_string(*pid);
    return out += kExtension;
}

std::string runStem(std::string_view output) {
    if (output.size() > kExtension.size() && output.ends_with(kExtension)) output.remove_suffix(kExtension.size());
    return std::string(output);
}

std::optional<RunFileName> parseRunFileName(std::string_view path) {
    if (path.size() <= kExtension.size() || !path.ends_with(kExtension)) return std::nullopt;
    std::string_view stem = path.substr(0, path.size() - kExtension.size());
    if (stem.ends_with('/')) return std::nullopt;
    RunFileName name;
    name.pid = takeNumberedPart(stem, "pid");
    name.rank = takeNumberedPart(stem, "rank");
    name.stem = std::string(stem);
    return name;
}

namespace {

constexpr std::string_view kSidecars[] = { "-wal", "-shm", "-journal" };

// Calls `found(name, sidecar)` for each entry of stem's folder that is a file of run `stem`, or one's sidecar.
template <class Found> void forEachRunEntry(const std::string& stem, Found found) {
    const fs::path stemPath(stem);
    const fs::path dir = stemPath.has_parent_path() ? stemPath.parent_path() : fs::path(".");
    const std::string stemName = stemPath.filename().string();
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string filename = it->path().filename().string();
        std::string_view name = filename;
        if (!name.starts_with(stemName)) continue;
        std::string_view sidecar;
        for (std::string_view suffix : kSidecars)
            if (name.ends_with(suffix)) {
                sidecar = suffix;
                name.remove_suffix(suffix.size());
                break;
            }
        std::error_code typeError;
        if (it->is_symlink(typeError) || !it->is_regular_file(typeError)) continue;
        const std::optional<RunFileName> parsed = parseRunFileName(name);
        if (parsed && parsed->stem == stemName) found(*parsed, sidecar);
    }
}

} // namespace

std::vector<std::string> listRunSidecars(const std::string& stem) {
    std::vector<std::string> out;
    forEachRunEntry(stem, [&](RunFileName name, std::string_view sidecar) {
        if (sidecar.empty()) return;
        name.stem = stem;
        out.push_back(name.path() + std::string(sidecar));
    });
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<RunFileName> listRunFiles(const std::string& stem) {
    std::vector<RunFileName> out;
    forEachRunEntry(stem, [&](RunFileName name, std::string_view sidecar) {
        if (!sidecar.empty()) return;
        name.stem = stem;
        out.push_back(std::move(name));
    });
    // Main, then the ranks (each followed by its other processes), then the run's other processes.
    const auto order = [](const RunFileName& f) {
        return std::tuple(f.isMain() ? 0 : f.rank ? 1 : 2, f.rank.value_or(-1), f.pid.value_or(-1));
    };
    std::sort(out.begin(), out.end(), [&](const RunFileName& a, const RunFileName& b) { return order(a) < order(b); });
    return out;
}

} // namespace tuneup
