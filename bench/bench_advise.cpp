// Times `tuneup advise` phase by phase on one or more traces: import (with its MB/s), steps and
// breakdown, kernel classes, each rule, the text report, with the peak resident memory so far.
// Usage: bench_advise FILE... (see docs/performance.md)

#include "advise/advisor.h"
#include "all_rules.h"
#include "import/importer.h"
#include "report/report.h"

#include <chrono>
#include <cstdio>
#include <span>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

using namespace tuneup::analysis;

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

long maxRssMiB() {
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

long rssNowMiB() {
    long pages = 0, resident = 0;
    if (FILE* f = fopen("/proc/self/statm", "r")) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_advise FILE...  (times import, steps, each rule and the report)\n");
        return 2;
    }
    const auto total = std::chrono::steady_clock::now();
    std::vector<TraceModel> models;
    for (int i = 1; i < argc; ++i) {
        const auto t = std::chrono::steady_clock::now();
        try {
            models.push_back(importTrace(argv[i], {}));
        } catch (const std::exception& e) {
            fprintf(stderr, "bench_advise: %s\n", e.what());
            return 1;
        }
        const double s = seconds(t);
        const TraceModel& m = models.back();
        printf("import     %7.3f s  %5ld MiB (now %ld)  %s: %zu kernels, %.0f MB read (%.0f MB/s)\n", s, maxRssMiB(),
            rssNowMiB(), argv[i], m.kernels.size(), double(m.stats.bytesRead) / 1e6,
            double(m.stats.bytesRead) / 1e6 / s);
    }
    std::vector<RankAnalysis> ranks(models.size());
    for (size_t i = 0; i < models.size(); ++i) {
        ranks[i].model = &models[i];
        ranks[i].rank = int(i);
        auto t = std::chrono::steady_clock::now();
        ranks[i].steps = analyzeSteps(models[i], {});
        printf("steps      %7.3f s  %5ld MiB (now %ld)  %zu steps and their breakdown\n", seconds(t), maxRssMiB(),
            rssNowMiB(), ranks[i].steps.detection.steps.size());
        t = std::chrono::steady_clock::now();
        ranks[i].kernelClasses = classifyKernels(models[i]);
        printf("classes    %7.3f s  %5ld MiB  kernel classes\n", seconds(t), maxRssMiB());
    }
    // Each rule alone, where the trace has what it needs (as the engine checks).
    const auto rules = tuneup::rules::builtinRules();
    std::vector<RankSummary> summaries;
    for (const RankAnalysis& rank : ranks)
        summaries.push_back(summarizeRank(rank, ranks.size()));
    for (const auto& rule : rules) {
        const RankAnalysis& rank = ranks.front();
        bool evaluable = true;
        for (Input need : rule->info().needs)
            evaluable = evaluable && hasInput(rank, ranks.size(), need);
        if (!evaluable) continue;
        RuleOutcome outcome;
        const auto t = std::chrono::steady_clock::now();
        if (rule->info().jobWide)
            rule->evaluateJob(JobContext(summaries), outcome);
        else
            rule->evaluate(RuleContext(rank, ranks.size()), outcome);
        printf("rule       %7.3f s  %5ld MiB  %s\n", seconds(t), maxRssMiB(), std::string(rule->info().id).c_str());
    }
    const auto all = std::chrono::steady_clock::now();
    const AdviceReport report = advise(models, rules, {});
    printf("advise     %7.3f s  steps, classes and all rules\n", seconds(all));
    const auto text = std::chrono::steady_clock::now();
    std::ostringstream out;
    writeTextReport(out, report, ReportContext {});
    printf("report     %7.3f s  text, %zu bytes\n", seconds(text), out.str().size());
    printf("total      %7.3f s  max RSS %ld MiB\n", seconds(total), maxRssMiB());
    return 0;
}
