#include "import/native_frame_names.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <optional>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace tuneup::analysis {

namespace {

constexpr size_t kAddressesPerRun = 256; // addresses on one addr2line command line

struct Location {
    std::string file, function;
    int64_t line = 0;
};

// Runs `argv` (no shell) and returns its standard output; nullopt with `error` set when it cannot be run or fails.
std::optional<std::string> outputOf(const std::vector<std::string>& argv, std::string& error) {
    int pipeFds[2];
    if (pipe2(pipeFds, O_CLOEXEC) != 0) {
        error = std::string("cannot make a pipe: ") + strerror(errno);
        return std::nullopt;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipeFds[1]);
    if (rc != 0) {
        close(pipeFds[0]);
        error
            = argv[0] + (rc == ENOENT ? std::string(" not found: install binutils") : ": " + std::string(strerror(rc)));
        return std::nullopt;
    }
    std::string out;
    char buffer[65536];
    for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        out.append(buffer, size_t(n));
    }
    close(pipeFds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        error = argv[0] + " failed";
        return std::nullopt;
    }
    return out;
}

// Code of the system's headers (the standard library's, LibTorch's under /usr/include) inlined into the user's.
bool isSystemSource(const std::string& file) {
    return file.starts_with("/usr/include/") || file.starts_with("/usr/lib/") || file.starts_with("/usr/local/cuda");
}

// addr2line -a -f -C -i prints, per address, a line with the address, then two lines per frame inlined there,
// innermost first: the function ("??" unknown), and "file:line" ("??:0", "??:?"), perhaps followed by
// " (discriminator N)". The named frames of each of the `count` addresses, innermost first.
std::vector<std::vector<Location>> parseAddr2line(const std::string& text, size_t count) {
    std::vector<std::vector<std::string>> groups;
    for (size_t at = 0; at < text.size();) {
        const size_t end = text.find('\n', at);
        std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? text.size() : end + 1;
        if (line.starts_with("0x"))
            groups.emplace_back();
        else if (!groups.empty())
            groups.back().push_back(std::move(line));
    }
    std::vector<std::vector<Location>> out(count);
    for (size_t g = 0; g < count && g < groups.size(); ++g) {
        const std::vector<std::string>& lines = groups[g];
        for (size_t i = 0; i + 1 < lines.size(); i += 2) {
            std::string place = lines[i + 1];
            if (const size_t note = place.find(" ("); note != std::string::npos) place.resize(note);
            const size_t colon = place.rfind(':');
            if (colon == std::string::npos || place.compare(0, colon, "??") == 0) continue;
            Location l;
            l.file = place.substr(0, colon);
            l.line = std::strtoll(place.c_str() + colon + 1, nullptr, 10);
            if (l.line <= 0) continue;
            if (lines[i] != "??") l.function = lines[i];
            out[g].push_back(std::move(l));
        }
    }
    return out;
}

class Db {
public:
    explicit Db(const std::string& path) {
        if (sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) return;
        sqlite3_busy_timeout(m_db, 5000);
        m_ok = exec("PRAGMA trusted_schema = OFF");
    }
    ~Db() {
        for (auto& [sql, s] : m_statements)
            sqlite3_finalize(s);
        sqlite3_close(m_db);
    }
    bool ok() const { return m_ok; }
    std::string error() const { return m_db ? sqlite3_errmsg(m_db) : "out of memory"; }
    bool exec(const char* sql) { return sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr) == SQLITE_OK; }
    sqlite3_stmt* statement(const char* sql) {
        sqlite3_stmt*& s = m_statements[sql];
        if (!s && sqlite3_prepare_v2(m_db, sql, -1, &s, nullptr) != SQLITE_OK) return nullptr;
        sqlite3_reset(s);
        return s;
    }
    // The id of `value` in strings, added when absent.
    int64_t intern(const std::string& value) {
        if (const auto it = m_interned.find(value); it != m_interned.end()) return it->second;
        int64_t id = 0;
        if (sqlite3_stmt* find = statement("SELECT id FROM strings WHERE value = ?")) {
            sqlite3_bind_text(find, 1, value.c_str(), int(value.size()), SQLITE_TRANSIENT);
            if (sqlite3_step(find) == SQLITE_ROW) id = sqlite3_column_int64(find, 0);
        }
        if (id == 0)
            if (sqlite3_stmt* add = statement("INSERT INTO strings(value) VALUES (?)")) {
                sqlite3_bind_text(add, 1, value.c_str(), int(value.size()), SQLITE_TRANSIENT);
                if (sqlite3_step(add) == SQLITE_DONE) id = sqlite3_last_insert_rowid(m_db);
            }
        return m_interned[value] = id;
    }

private:
    sqlite3* m_db = nullptr;
    bool m_ok = false;
    std::map<std::string, sqlite3_stmt*> m_statements;
    std::map<std::string, int64_t> m_interned;
};

// The addresses of "0x4011a0 0x401234".
std::vector<int64_t> parseAddresses(const std::string& text) {
    std::vector<int64_t> out;
    for (const char* p = text.c_str(); *p;) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(p, &end, 16);
        if (end == p) break;
        out.push_back(int64_t(value));
        p = end;
    }
    return out;
}

// Names `addresses` of `module` with addr2line (each its inlined frames, innermost first); nullopt (and `problem`
// set) when it cannot run.
std::optional<std::map<int64_t, std::vector<Location>>> locate(const std::string& addr2line, const std::string& module,
    const std::vector<int64_t>& addresses, std::string& problem) {
    std::map<int64_t, std::vector<Location>> out;
    for (size_t from = 0; from < addresses.size(); from += kAddressesPerRun) {
        const size_t count = std::min(kAddressesPerRun, addresses.size() - from);
        std::vector<std::string> argv { addr2line, "-a", "-f", "-C", "-i", "-e", module };
        for (size_t i = 0; i < count; ++i) {
            char hex[32];
            snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(addresses[from + i]));
            argv.emplace_back(hex);
        }
        std::string error;
        const std::optional<std::string> output = outputOf(argv, error);
        if (!output) {
            problem = error.find("not found") == std::string::npos ? error + " on " + module : error;
            return std::nullopt;
        }
        std::vector<std::vector<Location>> locations = parseAddr2line(*output, count);
        for (size_t i = 0; i < count; ++i)
            out[addresses[from + i]] = std::move(locations[i]);
    }
    return out;
}

// Of `frames` and the frames inlined there, innermost first: the first in the user's sources (a call into a
// header's inline function or template is shown where the user made it), else the first named; null if none is.
const Location* choose(const std::map<int64_t, std::vector<Location>>& located, const std::vector<int64_t>& frames) {
    const Location* first = nullptr;
    for (const int64_t address : frames)
        for (const Location& l : located.at(address)) {
            if (!isSystemSource(l.file)) return &l;
            if (!first) first = &l;
        }
    return first;
}

} // namespace

NativeFrameNaming nameNativeFrames(const std::string& recordingPath, const std::string& addr2line) {
    NativeFrameNaming result;
    Db db(recordingPath);
    if (!db.ok()) return result; // not a file tuneup can write: nothing to name there
    sqlite3_stmt* places = db.statement("SELECT DISTINCT p.module_id, m.value, p.address, coalesce(p.callers, '') "
                                        "FROM native_samples p JOIN strings m ON m.id = p.module_id "
                                        "WHERE p.file_id IS NULL");
    if (!places) return result; // an older schema: no native samples
    struct Place {
        std::string callers; // as stored
        std::vector<int64_t> frames; // the address, then its callers'
    };
    std::map<std::pair<int64_t, std::string>, std::vector<Place>> byModule;
    while (sqlite3_step(places) == SQLITE_ROW) {
        const auto* module = reinterpret_cast<const char*>(sqlite3_column_text(places, 1));
        const auto* callers = reinterpret_cast<const char*>(sqlite3_column_text(places, 3));
        Place place { callers ? callers : "", { sqlite3_column_int64(places, 2) } };
        for (const int64_t caller : parseAddresses(place.callers))
            place.frames.push_back(caller);
        byModule[{ sqlite3_column_int64(places, 0), module ? module : "" }].push_back(std::move(place));
        ++result.frames;
    }
    if (byModule.empty()) return result;
    if (!db.exec("BEGIN IMMEDIATE")) {
        result.problem = "cannot write " + recordingPath + ": " + db.error();
        return result;
    }
    for (const auto& [key, modulePlaces] : byModule) {
        const auto& [moduleId, module] = key;
        if (access(module.c_str(), R_OK) != 0) {
            result.problem = module + " cannot be read (" + strerror(errno) + ")";
            continue;
        }
        std::vector<int64_t> addresses;
        for (const Place& place : modulePlaces)
            addresses.insert(addresses.end(), place.frames.begin(), place.frames.end());
        std::sort(addresses.begin(), addresses.end());
        addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
        const std::optional<std::map<int64_t, std::vector<Location>>> located
            = locate(addr2line, module, addresses, result.problem);
        if (!located) {
            if (result.problem.find("not found") != std::string::npos) break;
            continue;
        }
        for (const Place& place : modulePlaces) {
            const Location* chosen = choose(*located, place.frames);
            if (!chosen) continue;
            sqlite3_stmt* update = db.statement("UPDATE native_samples SET file_id = ?, line = ?, function_id = "
                                                "coalesce(?, function_id) WHERE module_id = ? AND address = ? AND "
                                                "coalesce(callers, '') = ? AND file_id IS NULL");
            if (!update) break;
            sqlite3_bind_int64(update, 1, db.intern(chosen->file));
            sqlite3_bind_int64(update, 2, chosen->line);
            if (chosen->function.empty())
                sqlite3_bind_null(update, 3);
            else
                sqlite3_bind_int64(update, 3, db.intern(chosen->function));
            sqlite3_bind_int64(update, 4, moduleId);
            sqlite3_bind_int64(update, 5, place.frames.front());
            sqlite3_bind_text(update, 6, place.callers.c_str(), int(place.callers.size()), SQLITE_TRANSIENT);
            if (sqlite3_step(update) == SQLITE_DONE) ++result.named;
        }
    }
    if (!db.exec("COMMIT")) {
        db.exec("ROLLBACK");
        result.problem = "cannot write " + recordingPath + ": " + db.error();
        result.named = 0;
    }
    if (result.named < result.frames && result.problem.empty())
        result.problem = "the binaries have no debug information for them (build with -g)";
    return result;
}

} // namespace tuneup::analysis
