#include "advise/sql_rule.h"

#include "advise/rule_context.h"
#include "export/tuneup_writer.h"
#include "import/tuneup_file.h"
#include "trace_schema.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sqlite3.h>
#include <sstream>

namespace tuneup::analysis {

namespace {

// A runaway query (a cross join over a million kernels) is stopped rather than hang a CI job.
constexpr auto kQueryTimeLimit = std::chrono::seconds(120);

/** An SQLite connection that closes itself. */
struct Connection {
    sqlite3* db = nullptr;
    Connection() = default;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    ~Connection() { sqlite3_close(db); }
};

/** A prepared statement that finalizes itself. */
struct Statement {
    sqlite3_stmt* stmt = nullptr;
    Statement() = default;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement() { sqlite3_finalize(stmt); }
};

// An in-memory database with the tuneup schema and no rows: rules are compiled against it when loaded.
void openSchemaOnly(Connection& c) {
    if (sqlite3_open_v2(":memory:", &c.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK
        || sqlite3_exec(c.db, std::string(schema::schemaSql()).c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
        throw std::runtime_error(std::string("cannot create the schema database: ") + sqlite3_errmsg(c.db));
}

int lineAt(std::string_view text, size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + int(std::count(text.begin(), text.begin() + long(offset), '\n'));
}

// The offset of the first character that is not whitespace, a comment or (with `semicolons`) a ';'.
size_t skipBlank(std::string_view text, size_t i, bool semicolons) {
    while (i < text.size()) {
        const char c = text[i];
        if (isspace(static_cast<unsigned char>(c)) || (semicolons && c == ';')) {
            ++i;
        } else if (text.substr(i, 2) == "--") {
            const size_t end = text.find('\n', i);
            i = end == std::string_view::npos ? text.size() : end + 1;
        } else if (text.substr(i, 2) == "/*") {
            const size_t end = text.find("*/", i + 2);
            i = end == std::string_view::npos ? text.size() : end + 2;
        } else {
            break;
        }
    }
    return i;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = char(tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

bool validId(std::string_view id) {
    if (id.empty() || !isalnum(static_cast<unsigned char>(id.front()))) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (islower(static_cast<unsigned char>(c)) || isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_'
            || c == '.');
    });
}

// Where SQLite's error points: its own offset, else (for "no such table: x" and the like, which
// SQLite 3.40 does not locate) the first mention of the name after `from`, else `from` itself.
size_t errorOffset(sqlite3* db, std::string_view text, size_t from) {
    if (const int offset = sqlite3_error_offset(db); offset >= 0) return size_t(offset);
    const std::string_view message = sqlite3_errmsg(db);
    for (std::string_view prefix : { "no such table: ", "no such column: ", "no such function: " }) {
        if (!message.starts_with(prefix)) continue;
        std::string name = lower(message.substr(prefix.size()));
        if (const size_t dot = name.rfind('.'); dot != std::string::npos) name.erase(0, dot + 1);
        const std::string haystack = lower(text);
        for (size_t at = haystack.find(name, from); !name.empty() && at != std::string::npos;
             at = haystack.find(name, at + 1)) {
            auto word = [&](size_t i) {
                return i < haystack.size() && (isalnum(static_cast<unsigned char>(haystack[i])) || haystack[i] == '_');
            };
            if ((at == 0 || !word(at - 1)) && !word(at + name.size())) return at;
        }
    }
    return from;
}

std::string columnText(sqlite3_stmt* s, int column) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
    return p ? std::string(p, size_t(sqlite3_column_bytes(s, column))) : std::string();
}

} // namespace

// ---- per-rank databases ---------------------------------------------------------------------------

/** One rank's trace as a tuneup-schema database: the tuneup file itself, or one built in memory. */
class TraceDatabase {
public:
    explicit TraceDatabase(const TraceModel& model) {
        if (model.info.format == SourceFormat::TuneupDb && !model.info.path.empty()) {
            try {
                m_file = TuneupFile::open(model.info.path);
                return;
            } catch (const TuneupFileError&) {
                // Gone or changed since the import: the model still holds what it had.
            }
        }
        if (sqlite3_open_v2(":memory:", &m_memory.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
            throw std::runtime_error("cannot create an in-memory database");
        writeTuneupSchema(model, m_memory.db);
        sqlite3_exec(m_memory.db, "PRAGMA query_only=1", nullptr, nullptr, nullptr);
    }
    sqlite3* handle() const { return m_file ? m_file->db() : m_memory.db; }
    std::mutex& mutex() { return m_mutex; } // one query at a time: the progress handler is per connection

private:
    std::unique_ptr<TuneupFile> m_file;
    Connection m_memory;
    std::mutex m_mutex;
};

/** The databases of the traces being advised, by model instance: every user rule of a rank queries
    the same one. The most recently used few are kept (a job's ranks may be advised side by side). */
class TraceDatabases {
public:
    std::shared_ptr<TraceDatabase> get(const TraceModel& model) {
        std::lock_guard lock(m_mutex);
        for (auto& entry : m_entries)
            if (entry.id == model.instanceId()) {
                entry.lastUse = ++m_uses;
                return entry.db;
            }
        if (m_entries.size() >= kKept)
            m_entries.erase(std::min_element(m_entries.begin(), m_entries.end(),
                [](const Entry& a, const Entry& b) { return a.lastUse < b.lastUse; }));
        m_entries.push_back({ model.instanceId(), ++m_uses, std::make_shared<TraceDatabase>(model) });
        return m_entries.back().db;
    }

private:
    struct Entry {
        uint64_t id = 0, lastUse = 0;
        std::shared_ptr<TraceDatabase> db;
    };
    static constexpr size_t kKept = 16;
    std::mutex m_mutex;
    uint64_t m_uses = 0;
    std::vector<Entry> m_entries;
};

// ---- parsing --------------------------------------------------------------------------------------

SqlRule::~SqlRule() = default;

std::unique_ptr<SqlRule> SqlRule::parse(
    const std::string& path, std::string_view text, std::shared_ptr<TraceDatabases> databases) {
    std::unique_ptr<SqlRule> rule(new SqlRule);
    rule->m_path = path;
    rule->m_sql = std::string(text);
    auto fail = [&](int line, const std::string& problem) -> SqlRuleError {
        return SqlRuleError(path + (line > 0 ? ":" + std::to_string(line) : "") + ": " + problem);
    };

    // The header: the leading comment lines of the form "-- key: value".
    std::map<std::string, int> seen;
    bool haveSeverity = false;
    int line = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t end = std::min(text.find('\n', pos), text.size());
        const std::string_view raw = trim(text.substr(pos, end - pos));
        ++line;
        pos = end + 1;
        if (raw.empty()) continue;
        if (!raw.starts_with("--")) break;
        const std::string_view comment = trim(raw.substr(2));
        const size_t colon = comment.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string key = lower(trim(comment.substr(0, colon)));
        const std::string value(trim(comment.substr(colon + 1)));
        static const std::set<std::string> kKeys
            = { "id", "title", "severity", "kind", "summary", "fix-python", "fix-cpp" };
        if (!kKeys.count(key)) continue; // an ordinary comment that happens to hold a colon
        const bool repeatable = key == "fix-python" || key == "fix-cpp";
        if (!repeatable && seen.count(key))
            throw fail(line, "`" + key + "` is given twice (first on line " + std::to_string(seen[key]) + ")");
        seen.emplace(key, line);
        if (key == "id") {
            if (!validId(value))
                throw fail(line,
                    "rule id '" + value
                        + "' is not valid; use lowercase letters, digits and '-', e.g. `-- id: big-memcpy`");
            rule->m_id = value;
            rule->m_idLine = line;
        } else if (key == "title") {
            rule->m_title = value;
        } else if (key == "severity") {
            const auto severity = parseSeverity(lower(value));
            if (!severity) throw fail(line, "severity '" + value + "' is not one of info, warning, error");
            rule->m_severity = *severity;
            haveSeverity = true;
        } else if (key == "kind") { // whether the materiality floor applies (advise/materiality.h)
            const auto kind = parseFindingKind(lower(value));
            if (!kind) throw fail(line, "kind '" + value + "' is not one of performance, correctness, information");
            rule->m_kind = *kind;
        } else if (key == "summary") {
            rule->m_summary = value;
        } else {
            std::string& fix = key == "fix-python" ? rule->m_fixPython : rule->m_fixCpp;
            fix += (fix.empty() ? "" : "\n") + value;
        }
    }
    std::string missing;
    if (rule->m_id.empty()) missing += " `-- id: my-rule`";
    if (rule->m_title.empty()) missing += " `-- title: what it finds`";
    if (!haveSeverity) missing += " `-- severity: warning`";
    if (!missing.empty()) throw fail(1, "the header comment lacks" + missing + " (one line each, before the SELECT)");

    // One read-only SELECT: the first keyword, then SQLite's own verdict, then nothing after it.
    const size_t start = skipBlank(text, 0, true);
    if (start == text.size()) throw fail(0, "holds no SQL statement; write one SELECT after the header");
    size_t wordEnd = start;
    while (wordEnd < text.size() && isalpha(static_cast<unsigned char>(text[wordEnd])))
        ++wordEnd;
    const std::string keyword = lower(text.substr(start, wordEnd - start));
    if (keyword != "select" && keyword != "with")
        throw fail(lineAt(text, start),
            "the statement starts with `" + (keyword.empty() ? std::string(1, text[start]) : keyword)
                + "`; a rule is one read-only SELECT (or WITH ... SELECT)");

    Connection schemaDb;
    openSchemaOnly(schemaDb);
    Statement s;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(schemaDb.db, text.data(), int(text.size()), &s.stmt, &tail) != SQLITE_OK) {
        throw fail(lineAt(text, errorOffset(schemaDb.db, text, start)),
            std::string(sqlite3_errmsg(schemaDb.db)) + " (tables and columns: docs/schema.md)");
    }
    if (!s.stmt) throw fail(lineAt(text, start), "holds no SQL statement");
    if (!sqlite3_stmt_readonly(s.stmt))
        throw fail(lineAt(text, start), "the statement would change the database; a rule is one read-only SELECT");
    const size_t rest = skipBlank(text, size_t(tail - text.data()), true);
    if (rest < text.size())
        throw fail(lineAt(text, rest), "a second statement starts here; a rule file holds exactly one SELECT");

    std::set<std::string> columns;
    std::string listed;
    for (int i = 0; i < sqlite3_column_count(s.stmt); ++i) {
        const std::string name = sqlite3_column_name(s.stmt, i);
        columns.insert(lower(name));
        listed += (i ? ", " : "") + name;
    }
    for (const char* required : { "title", "detail" })
        if (!columns.count(required))
            throw fail(lineAt(text, start),
                "the SELECT returns no `" + std::string(required) + "` column (it returns: " + listed
                    + "); name one with `... AS " + required + "`");

    rule->m_info.id = rule->m_id;
    rule->m_info.title = rule->m_title;
    if (rule->m_summary.empty()) rule->m_summary = "User rule " + path + ": " + rule->m_title + ".";
    rule->m_info.summary = rule->m_summary;
    rule->m_databases = databases ? std::move(databases) : std::make_shared<TraceDatabases>();
    return rule;
}

// ---- evaluation -----------------------------------------------------------------------------------

void SqlRule::evaluate(const RuleContext& context, RuleOutcome& outcome) const {
    auto notEvaluated = [&](const std::string& why) {
        outcome.status = RuleStatus::NotEvaluated;
        outcome.reason = why;
        outcome.findings.clear();
    };
    std::shared_ptr<TraceDatabase> database;
    try {
        database = m_databases->get(context.model());
    } catch (const std::exception& e) {
        return notEvaluated(std::string("the trace could not be opened as an SQL database: ") + e.what());
    }
    std::lock_guard lock(database->mutex());
    sqlite3* db = database->handle();

    Statement s;
    if (sqlite3_prepare_v2(db, m_sql.c_str(), int(m_sql.size()), &s.stmt, nullptr) != SQLITE_OK || !s.stmt) {
        return notEvaluated("the query fails on this trace at " + m_path + ":"
            + std::to_string(lineAt(m_sql, errorOffset(db, m_sql, skipBlank(m_sql, 0, true)))) + ": "
            + sqlite3_errmsg(db));
    }
    int title = -1, detail = -1, startNs = -1, endNs = -1, gainNs = -1;
    std::vector<int> facts;
    for (int i = 0; i < sqlite3_column_count(s.stmt); ++i) {
        const std::string name = lower(sqlite3_column_name(s.stmt, i));
        int* known = name == "title" ? &title
            : name == "detail"       ? &detail
            : name == "start_ns"     ? &startNs
            : name == "end_ns"       ? &endNs
            : name == "gain_ns"      ? &gainNs
                                     : nullptr;
        if (known && *known < 0)
            *known = i;
        else
            facts.push_back(i);
    }

    const auto deadline = std::chrono::steady_clock::now() + kQueryTimeLimit;
    sqlite3_progress_handler(
        db, 10000,
        [](void* d) {
            return std::chrono::steady_clock::now() > *static_cast<const std::chrono::steady_clock::time_point*>(d) ? 1
                                                                                                                    : 0;
        },
        const_cast<std::chrono::steady_clock::time_point*>(&deadline));
    size_t rows = 0;
    int rc;
    while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) {
        if (++rows > kMaxFindings) continue;
        Finding f;
        f.severity = m_severity;
        f.kind = m_kind;
        f.title = title >= 0 ? columnText(s.stmt, title) : "";
        if (f.title.empty()) f.title = m_title;
        f.detail = detail >= 0 ? columnText(s.stmt, detail) : "";
        const bool hasStart = startNs >= 0 && sqlite3_column_type(s.stmt, startNs) != SQLITE_NULL;
        const bool hasEnd = endNs >= 0 && sqlite3_column_type(s.stmt, endNs) != SQLITE_NULL;
        if (hasStart || hasEnd) {
            const int64_t a = hasStart ? sqlite3_column_int64(s.stmt, startNs) : sqlite3_column_int64(s.stmt, endNs);
            const int64_t b = hasEnd ? sqlite3_column_int64(s.stmt, endNs) : a;
            f.evidence.spans.push_back({ std::min(a, b), std::max(a, b) });
        }
        if (gainNs >= 0 && sqlite3_column_type(s.stmt, gainNs) != SQLITE_NULL)
            f.gain = context.gain(
                sqlite3_column_int64(s.stmt, gainNs), "gain_ns per step, as computed by " + m_path, "medium");
        for (int column : facts)
            if (sqlite3_column_type(s.stmt, column) != SQLITE_NULL)
                f.evidence.facts.emplace_back(sqlite3_column_name(s.stmt, column), columnText(s.stmt, column));
        f.fixPython = m_fixPython;
        f.fixCpp = m_fixCpp;
        f.docPath = m_path;
        outcome.findings.push_back(std::move(f));
    }
    sqlite3_progress_handler(db, 0, nullptr, nullptr);
    if (rc == SQLITE_INTERRUPT)
        return notEvaluated("the query ran longer than " + std::to_string(kQueryTimeLimit.count())
            + " s and was stopped (" + m_path + ")");
    if (rc != SQLITE_DONE)
        return notEvaluated("the query failed on this trace (" + m_path + "): " + sqlite3_errmsg(db));
    if (rows > kMaxFindings)
        outcome.findings.front().evidence.facts.emplace_back(
            "rows returned", std::to_string(rows) + " (the first " + std::to_string(kMaxFindings) + " are reported)");
    if (outcome.findings.empty()) outcome.reason = "the query (" + m_path + ") returned no rows";
}

// ---- loading --------------------------------------------------------------------------------------

std::vector<std::unique_ptr<Rule>> loadSqlRules(
    const std::string& path, const std::vector<std::unique_ptr<Rule>>& existing) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<fs::path> files;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status))
        throw SqlRuleError(path + ": no such directory; --rules takes a directory of .sql rule files");
    if (fs::is_directory(status)) {
        fs::directory_iterator it(path, ec);
        if (ec) throw SqlRuleError(path + ": cannot read the rules directory (" + ec.message() + ")");
        for (const fs::directory_entry& entry : it)
            if (entry.path().extension() == ".sql" && entry.is_regular_file(ec)) files.push_back(entry.path());
        if (files.empty()) throw SqlRuleError(path + ": holds no .sql rule files");
        std::sort(files.begin(), files.end());
    } else if (fs::is_regular_file(status)) {
        files.push_back(path);
    } else {
        throw SqlRuleError(path + ": is neither a directory nor a .sql file");
    }

    // Where each id is defined, to name the clash.
    std::map<std::string, std::string, std::less<>> owners;
    for (const auto& rule : existing) {
        const auto* user = dynamic_cast<const SqlRule*>(rule.get());
        owners.emplace(std::string(rule->info().id),
            user ? user->path() + ":" + std::to_string(user->idLine()) : "a built-in rule (tuneup rules lists them)");
    }
    auto databases = std::make_shared<TraceDatabases>();
    std::vector<std::unique_ptr<Rule>> rules;
    for (const fs::path& file : files) {
        std::ifstream in(file, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in || in.bad()) throw SqlRuleError(file.string() + ": cannot be read (check its permissions)");
        auto rule = SqlRule::parse(file.string(), text.str(), databases);
        const auto [it, added]
            = owners.emplace(std::string(rule->info().id), file.string() + ":" + std::to_string(rule->idLine()));
        if (!added)
            throw SqlRuleError(file.string() + ":" + std::to_string(rule->idLine()) + ": rule id '"
                + std::string(rule->info().id) + "' is already used by " + it->second + "; choose another id");
        rules.push_back(std::move(rule));
    }
    return rules;
}

} // namespace tuneup::analysis
