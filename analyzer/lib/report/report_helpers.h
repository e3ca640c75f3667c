#pragma once
// What the Markdown and HTML reports (and the GUI) compute alike: the parts of a step breakdown in
// display order, readable kernel names, rule doc links, and the rules without findings listed once each.

#include "report/report.h"

#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

// One slice of a step, in stacking order (bottom first); idle is split into its three causes on the host
// and the gaps inside CUDA graph replays.
struct BreakdownPart {
    std::string_view key; // "compute", for CSS classes
    std::string_view label; // "GPU compute"
    std::string_view color; // "#4e79a7"
    int64_t StepBreakdown::*field;
    // Parts most runs never have (communication in single-GPU runs, memset, graph replays): tables leave
    // out their rows of zeros.
    bool omittedWhenZero() const { return key == "communication" || key == "memset" || key == "idle-graph"; }
};
extern const std::vector<BreakdownPart> kBreakdownParts;
// A trace without GPU activity (StepAnalysis::gpuActivity() false): nothing idled on a GPU, so its step
// is the host's time, waiting for data or the rest, under kCpuOnly.
extern const std::vector<BreakdownPart> kHostBreakdownParts;
inline constexpr std::string_view kCpuOnly = "CPU only (no GPU activity recorded)";
// The parts a breakdown is shown in: kBreakdownParts, or kHostBreakdownParts without GPU activity.
const std::vector<BreakdownPart>& breakdownParts(const StepAnalysis& steps);

// A kernel name that fits a table cell: demangled, without "void " and the parameter list; when
// longer than `maxChars`, template arguments folded from the innermost ("<…>"), then its front cut.
// "void at::native::elementwise_kernel<128, 2, at::native::FillFunctor<float> >(int, ...)"
//   -> "at::native::elementwise_kernel<128, 2, at::native::FillFunctor<float> >"
std::string shortKernelName(std::string_view name, size_t maxChars = 120);

// Where a finding's rule is documented, the same on every machine: a user rule's own file, else
// rules/<id>.md (in tuneup's sources; installed as share/tuneup/rules/<id>.md; rule_docs.h has its text).
std::string docLink(const Finding& finding);

// The name an input is shown by: the path given on the command line, else the model's.
std::string inputLabel(const AdviceReport& report, const ReportContext& context, size_t rank);

// The rank a finding is about (its rank, else the first), and where that trace starts: evidence
// times are shown from there.
const RankSummary* rankOf(const AdviceReport& report, const Finding& finding);
int64_t traceStartNs(const AdviceReport& report, const Finding& finding);
// "+1.2 s – +1.3 s (85 ms)"
std::string relativeSpan(const TimeSpan& span, int64_t originNs);

// A finding raised alike on several ranks, shown once: the one with the largest gain, and every rank
// that raised it. Findings of single-rank jobs and job-wide rules are groups of their own.
struct FindingGroup {
    const Finding* finding = nullptr; // the representative: largest gain
    std::vector<int> ranks; // ascending; empty for a job-wide or single-rank finding
};
// Per-rank findings group by rule and by their place in the rule's outcome; ranked like ranked().
std::vector<FindingGroup> groupedFindings(const AdviceReport& report);
// "rank 3", "ranks 0-3, 7 (5 of 8)"
std::string rankList(const std::vector<int>& ranks, size_t jobRanks);

// The ranks a report describes one by one: all of a job of up to kRanksDescribed, else the fastest, the
// median and the slowest by median step (the report says how many it leaves out).
inline constexpr size_t kRanksDescribed = 8;
std::vector<size_t> ranksDescribed(const AdviceReport& report);

// What recording or reading the job's traces lost, repaired or could not read (RankSummary::losses),
// each stat once with its total over the ranks and the ranks that had it: every report lists them, so
// that no dropped or clamped event goes unsaid.
struct DataLoss {
    std::string name; // "recording.events.dropped", "times.out_of_range"
    StatSeverity severity = StatSeverity::DataLoss;
    int64_t count = 0;
    std::string description;
    std::vector<int> ranks; // ascending; the rank numbers that had it
};
std::vector<DataLoss> dataLoss(const AdviceReport& report);

// A finding's share of the median step, as every report states it: "2.6% of the step", "under 0.1% of
// the step", "share of the step unknown (no steps found)", or, without a time estimate, what it is
// instead ("a correctness finding: no time estimate").
std::string stepShareText(const Finding& f);

// Where a finding comes from in the user's code, as every report states it:
// "modeling_bert.py:412 in forward (24 events, 62%)".
std::string sourceSiteText(const SourceSite& site);

// What the materiality floor left out, one sentence; empty when it left out nothing.
// "3 findings under the materiality floor (0.5% of the step and 1 ms per step) are not shown; --all shows them"
std::string floorNote(const AdviceReport& report);

// Rules without findings, each (rule, status) once: per-rank rules repeat their outcome per rank.
std::vector<const RuleOutcome*> rulesWithout(const AdviceReport& report, RuleStatus status);

// One line of Markdown inline text: its punctuation escaped, HTML-significant characters as entities
// (GitHub renders raw HTML, so a kernel's "<float>" would vanish), bytes that are not UTF-8 as U+FFFD.
std::string markdownText(std::string_view raw);

} // namespace tuneup::analysis
