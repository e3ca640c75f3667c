#include "compare/history.h"

#include "compare/run_profile_json.h"
#include "import/sqlite_open.h"
#include "stats/descriptive.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <sqlite3.h>

namespace tuneup::analysis {

namespace {

constexpr int kApplicationId = 0x54554848; // "TUHH"
constexpr int kHistoryVersion = 1;

struct CloseDb {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using Db = std::unique_ptr<sqlite3, CloseDb>;
struct FinalizeStatement {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, FinalizeStatement>;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw HistoryError(path + ": " + what);
}

void exec(sqlite3* db, const std::string& path, const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        const std::string text = message ? message : sqlite3_errmsg(db);
        sqlite3_free(message);
        fail(path, "cannot write the history: " + text);
    }
}

int pragma(sqlite3* db, const char* name) {
    sqlite3_stmt* raw = nullptr;
    const std::string sql = std::string("PRAGMA ") + name;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) return -1;
    const Statement s(raw);
    return sqlite3_step(raw) == SQLITE_ROW ? sqlite3_column_int(raw, 0) : -1;
}

// A file that exists must be a tuneup history: never write into someone else's database.
void checkIsHistory(sqlite3* db, const std::string& path) {
    const int id = pragma(db, "application_id");
    if (id == -1)
        fail(path,
            "not a SQLite file tuneup can read (" + std::string(sqlite3_errmsg(db))
                + "): give a tuneup history file, or a new name to start one");
    if (id != kApplicationId)
        fail(path, "not a tuneup history (a SQLite file of another kind): give a tuneup history file, or a new name");
    if (pragma(db, "user_version") > kHistoryVersion)
        fail(path,
            "written by a newer tuneup (history version " + std::to_string(pragma(db, "user_version"))
                + "): update tuneup to read it");
}

std::string nowUtc() {
    const std::time_t now = std::time(nullptr);
    std::tm utc {};
    gmtime_r(&now, &utc);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return buffer;
}

std::string column(sqlite3_stmt* s, int i) {
    const unsigned char* text = sqlite3_column_text(s, i);
    return text ? std::string(reinterpret_cast<const char*>(text), size_t(sqlite3_column_bytes(s, i))) : std::string();
}

} // namespace

std::string environmentFingerprint(const Environment& env) {
    std::vector<std::string> facts;
    for (const EnvironmentFact& f : env)
        facts.push_back(f.key + "=" + f.value);
    std::sort(facts.begin(), facts.end());
    std::string out;
    for (const std::string& f : facts)
        out += (out.empty() ? "" : "; ") + f;
    return out;
}

int64_t addToHistory(const std::string& path, const RunProfile& profile, const std::string& label) {
    if (profile.stepMs.empty()) fail(path, "the run has no measured steps: nothing to keep");
    const bool exists = std::filesystem::exists(path);
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    const Db db(raw);
    if (rc != SQLITE_OK) fail(path, std::string("cannot open or create it: ") + sqlite3_errmsg(raw));
    sqlite3_busy_timeout(raw, 10'000); // two CI jobs adding at once wait for each other
    if (exists) checkIsHistory(raw, path);
    exec(raw, path, "BEGIN IMMEDIATE");
    if (!exists || pragma(raw, "application_id") == 0) {
        exec(raw, path,
            "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, added_at TEXT NOT NULL, label TEXT NOT NULL, "
            "fingerprint TEXT NOT NULL, steps INTEGER NOT NULL, median_ms REAL NOT NULL, profile TEXT NOT NULL)");
        exec(raw, path, ("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
        exec(raw, path, ("PRAGMA user_version = " + std::to_string(kHistoryVersion)).c_str());
    }
    sqlite3_stmt* insert = nullptr;
    if (sqlite3_prepare_v2(raw,
            "INSERT INTO runs (added_at, label, fingerprint, steps, median_ms, profile) VALUES (?, ?, ?, ?, ?, ?)", -1,
            &insert, nullptr)
        != SQLITE_OK)
        fail(path, std::string("cannot write the history: ") + sqlite3_errmsg(raw));
    const Statement s(insert);
    const std::string added = nowUtc(), fingerprint = environmentFingerprint(profile.environment),
                      json = runProfileToJson(profile);
    sqlite3_bind_text(insert, 1, added.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 2, label.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 3, fingerprint.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(insert, 4, int64_t(profile.stepMs.size()));
    sqlite3_bind_double(insert, 5, stats::median(profile.stepMs));
    sqlite3_bind_text(insert, 6, json.c_str(), int(json.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(insert) != SQLITE_DONE)
        fail(path, std::string("cannot write the history: ") + sqlite3_errmsg(raw));
    exec(raw, path, "COMMIT");
    return sqlite3_last_insert_rowid(raw);
}

std::vector<HistoryEntry> readHistory(const std::string& path) {
    if (!std::filesystem::exists(path))
        fail(path, "no such file (tuneup history add RUN --label LABEL --db " + path + " starts one)");
    sqlite3* raw = nullptr;
    const int rc = openSqliteForReading(path, /*immutable=*/false, &raw);
    const Db db(raw);
    if (rc != SQLITE_OK) fail(path, std::string("cannot open it: ") + sqlite3_errmsg(raw));
    checkIsHistory(raw, path);
    SqliteTables tables;
    if (listSqliteTables(raw, tables) != SQLITE_OK || !tables.plain.count("runs"))
        fail(path, "a tuneup history without its runs table: the file is damaged");
    sqlite3_stmt* select = nullptr;
    if (sqlite3_prepare_v2(
            raw, "SELECT id, added_at, label, fingerprint, profile FROM runs ORDER BY id", -1, &select, nullptr)
        != SQLITE_OK)
        fail(path, std::string("cannot read the runs: ") + sqlite3_errmsg(raw));
    const Statement s(select);
    std::vector<HistoryEntry> entries;
    int step = SQLITE_ROW;
    while ((step = sqlite3_step(select)) == SQLITE_ROW) {
        HistoryEntry e;
        e.id = sqlite3_column_int64(select, 0);
        e.addedAt = column(select, 1);
        e.label = column(select, 2);
        e.fingerprint = column(select, 3);
        try {
            e.profile = runProfileFromJson(column(select, 4));
        } catch (const std::exception& error) {
            fail(path, "run " + std::to_string(e.id) + " (" + e.label + ") is damaged: " + error.what());
        }
        entries.push_back(std::move(e));
    }
    if (step != SQLITE_DONE) fail(path, std::string("cannot read the runs: ") + sqlite3_errmsg(raw));
    return entries;
}

RunProfile historyBaseline(
    const std::vector<HistoryEntry>& history, const std::string& fingerprint, size_t count, const std::string& path) {
    std::vector<const HistoryEntry*> same;
    for (const HistoryEntry& e : history)
        if (e.fingerprint == fingerprint && !e.profile.stepMs.empty()) same.push_back(&e);
    if (same.empty()) {
        std::map<std::string, size_t> others;
        for (const HistoryEntry& e : history)
            ++others[e.fingerprint];
        std::string list;
        for (const auto& [f, n] : others)
            list += "\n  " + std::to_string(n) + " run(s): " + (f.empty() ? "(no environment recorded)" : f);
        fail(path,
            "holds no run recorded in this environment (" + fingerprint + ")"
                + (list.empty() ? std::string(": it is empty") : ", only:" + list)
                + "\nadd one with tuneup history add RUN --label LABEL --db " + path);
    }
    if (same.size() > count) same.erase(same.begin(), same.end() - ptrdiff_t(count));
    const RunProfile& latest = same.back()->profile;
    RunProfile b;
    b.inputs = { path + " (the last " + std::to_string(same.size()) + " run(s): " };
    for (size_t i = 0; i < same.size(); ++i)
        b.inputs[0] += (i ? ", " : "") + same[i]->label;
    b.inputs[0] += ")";
    b.ranks = latest.ranks;
    b.stepSource = latest.stepSource;
    b.findings = latest.findings;
    b.settings = latest.settings;
    b.environment = latest.environment;
    std::map<std::string, KernelStat> kernels;
    for (const HistoryEntry* e : same) {
        const RunProfile& p = e->profile;
        b.runs.push_back(p.stepMs);
        b.stepMs.insert(b.stepMs.end(), p.stepMs.begin(), p.stepMs.end());
        b.stepsFound += p.stepsFound;
        b.hasGpuWork |= p.hasGpuWork;
        b.kernelSteps += p.kernelSteps;
        for (const KernelStat& k : p.kernels) {
            KernelStat& sum = kernels[k.name];
            sum.name = k.name;
            sum.kernelClass = k.kernelClass;
            sum.calls += k.calls;
            sum.totalNs += k.totalNs;
        }
        // The breakdown per step: the mean of the runs' means, each weighted by its steps.
        const auto n = int64_t(p.stepMs.size());
        for (const auto& [name, field] : kStepBreakdownFields)
            b.perStep.*field += p.perStep.*field * n;
    }
    const auto total = int64_t(b.stepMs.size());
    for (const auto& [name, field] : kStepBreakdownFields)
        b.perStep.*field /= total;
    for (auto& [name, k] : kernels)
        b.kernels.push_back(std::move(k));
    std::sort(b.kernels.begin(), b.kernels.end(),
        [](const KernelStat& x, const KernelStat& y) { return x.totalNs > y.totalNs; });
    return b;
}

} // namespace tuneup::analysis
