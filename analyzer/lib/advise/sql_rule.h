#pragma once
// User rules: a .sql file holds ONE read-only SELECT over the tuneup trace schema (docs/schema.md),
// after a header comment:
//
//     -- id: big-memcpy                     (required; lowercase letters, digits, '-', '_', '.')
//     -- title: Large host copies           (required)
//     -- severity: warning                  (required: info, warning or error)
//     -- summary: One sentence for `tuneup rules`.            (optional)
//     -- fix-python: x = x.pin_memory()     (optional; repeat the line for more lines)
//     -- fix-cpp: auto y = x.pin_memory();  (optional; likewise)
//     SELECT 'copy of ' || bytes || ' bytes' AS title, '' AS detail, start_ns, end_ns
//     FROM memcpys WHERE bytes > 100000000;
//
// Each row is a finding. Columns: `title` and `detail` (required), `start_ns` and `end_ns` (a time
// range to look at), `gain_ns` (the estimated saving per step); any other column is shown as an
// evidence fact. The query runs on each rank's trace: a tuneup file is queried directly (read-only);
// any other format is first written into an in-memory database of the same schema.

#include "advise/rule.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

/** A rule file that cannot be used. The message reads "FILE:LINE: problem; what to do". */
class SqlRuleError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class TraceDatabases; // per-rank databases shared by the rules loaded together (sql_rule.cpp)

class SqlRule final : public Rule {
public:
    // Checks the header, that the text is one read-only SELECT and that it compiles against the
    // schema. `databases` may be shared between rules; nullptr makes one for this rule.
    static std::unique_ptr<SqlRule> parse(
        const std::string& path, std::string_view text, std::shared_ptr<TraceDatabases> databases = nullptr);
    ~SqlRule() override;
    SqlRule(const SqlRule&) = delete;
    SqlRule& operator=(const SqlRule&) = delete;

    const RuleInfo& info() const override { return m_info; }
    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override;

    const std::string& path() const { return m_path; }
    const std::string& sql() const { return m_sql; }
    int idLine() const { return m_idLine; } // the header line that gives the id

    // Findings past this many rows are counted, not reported.
    static constexpr size_t kMaxFindings = 200;

private:
    SqlRule() = default;
    std::string m_path, m_sql, m_id, m_title, m_summary, m_fixPython, m_fixCpp;
    Severity m_severity = Severity::Warning;
    FindingKind m_kind = FindingKind::Performance;
    int m_idLine = 0;
    RuleInfo m_info; // views into the strings above
    std::shared_ptr<TraceDatabases> m_databases;
};

// Loads `path`: every *.sql file in a directory (in name order), or one .sql file. A user rule's id
// must not be used by a rule in `existing` (the built-in ones) nor by another file. Throws
// SqlRuleError naming the file (and line) of the first problem.
std::vector<std::unique_ptr<Rule>> loadSqlRules(
    const std::string& path, const std::vector<std::unique_ptr<Rule>>& existing = {});

} // namespace tuneup::analysis
