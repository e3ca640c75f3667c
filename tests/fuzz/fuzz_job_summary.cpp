// libFuzzer target: the job summary reader (`tuneup advise node*.json`) on any bytes, written to a file
// and read; what it reads is reported as advise reports it. A SummaryFileError is the expected answer to
// bad input; anything else, and any sanitizer report, is a bug.

#include "fuzz_common.h"
#include "job/summary_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tuneup::analysis;
    const std::string& path = tuneup::fuzz::writeInput(data, size);
    try {
        std::vector<RankSummary> ranks;
        std::vector<std::vector<RuleOutcome>> outcomes;
        for (SummarizedRank& rank : readJobSummary(path)) {
            ranks.push_back(std::move(rank.summary));
            outcomes.push_back(std::move(rank.outcomes));
        }
        const AdviceReport report = finishAdvice(std::move(ranks), std::move(outcomes), {});
        for (const ReportFormat& format : reportFormats()) {
            std::ostringstream out;
            format.write(out, report, ReportContext {});
            TUNEUP_FUZZ_CHECK(tuneup::isValidUtf8(out.str()));
        }
    } catch (const SummaryFileError&) { }
    return 0;
}
