#pragma once
// What a rule reports: a finding with its evidence, its estimated gain (and the model behind the
// estimate) and the fix; or why the rule found nothing or could not be evaluated.

#include "model/trace_model.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tuneup::analysis {

enum class Severity { Info = 0, Warning = 1, Error = 2 };
std::string_view severityName(Severity s); // "warning"
std::optional<Severity> parseSeverity(std::string_view text);

// An event the GUI can jump to: a row of one of the TraceModel's tables.
enum class EventTable {
    Kernel,
    Memcpy,
    Memset,
    Sync,
    ApiCall,
    CpuOp,
    Annotation,
    Collective,
    GemmCall,
    ConvCall,
    MemoryEvent,
};
std::string_view eventTableName(EventTable t); // "kernels"

struct EventRef {
    EventTable table = EventTable::Kernel;
    RowIndex row = kNoRow;
};

struct Evidence {
    std::vector<std::pair<std::string, std::string>> facts; // label -> value, in the order to show them
    std::vector<EventRef> events; // the events that show it (capped per rule)
    std::vector<TimeSpan> spans; // time ranges to look at
    size_t eventsTotal = 0; // before capping `events`
};

// A line of the user's code behind a finding (advise/call_sites.h): how many of its evidence events come
// from there, and their share of those traced to a line; or, with `call`, how many of the finding's watched
// calls were made there; or, `sampled`, how many of the main thread's Python samples during the finding's time
// were there, and their share of those samples.
struct SourceSite {
    std::string file;
    int64_t line = 0;
    std::string function;
    size_t events = 0; // events, or samples when `sampled`
    double share = 0; // 0..1
    bool sampled = false;
    std::string call; // the watched call made there (Finding::sourceCalls), "" for the evidence's lines
};

struct Gain {
    int64_t perStepNs = 0; // estimated time saved per step
    double stepShare = 0; // perStepNs / median step time, 0..1 (0 when steps are unknown)
    std::string model; // how it was estimated, in one sentence
    std::string confidence; // "high", "medium" or "low"
};

// What a finding is about, which decides whether the materiality floor (advise/materiality.h) applies:
// a finding about time is advice only when the time is worth it; a setting that is wrong whatever it
// costs (a debug API left on in training) or a finding that only informs is shown however small.
enum class FindingKind { Performance = 0, Correctness = 1, Information = 2 };
std::string_view findingKindName(FindingKind k); // "performance"
std::optional<FindingKind> parseFindingKind(std::string_view text);

struct Finding {
    std::string ruleId;
    FindingKind kind = FindingKind::Performance;
    Severity severity = Severity::Warning;
    std::string title; // one line: what is wrong, with the numbers
    std::string detail; // a few sentences: how it was measured, what it means
    Evidence evidence;
    std::optional<Gain> gain;
    std::vector<SourceSite> sources; // where in the user's code, the most events first; empty when unknown
    // The Python calls behind the finding that the bootstrap watches ("torch.autograd.set_detect_anomaly",
    // "DataLoader"; tuneup recordings' python_calls): the advisor adds the lines they were made from to
    // `sources`.
    std::vector<std::string> sourceCalls;
    std::string fixPython; // code to paste
    std::string fixCpp;
    int rank = -1; // the rank the finding is about, -1 when the job has one process or it is job-wide
    std::string docPath; // where the rule is explained when not rules/<id>.md (a user rule's .sql file)
};

enum class RuleStatus {
    Raised, // at least one finding
    Clean, // evaluated, nothing found
    NotEvaluated, // the trace lacks an input the rule needs
    NotApplicable, // the rule does not apply to this trace (e.g. no tensor cores, not NVIDIA)
};
std::string_view ruleStatusName(RuleStatus s); // "not evaluated"

struct RuleOutcome {
    std::string ruleId;
    RuleStatus status = RuleStatus::Clean;
    std::string reason; // for Clean: what was checked; for NotEvaluated: "needs ..."; for NotApplicable: why
    std::vector<Finding> findings;
    // Findings under the materiality floor, kept out of `findings` (and so out of every report) unless
    // the job shows everything (JobOptions::materiality); they travel in job summaries for that.
    std::vector<Finding> belowFloor;
};

} // namespace tuneup::analysis
