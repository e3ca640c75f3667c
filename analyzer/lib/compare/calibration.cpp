#include "compare/calibration.h"

#include "compare/compare_report.h"
#include "units.h"
#include "utf8.h"

#include <algorithm>
#include <cmath>
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>

namespace tuneup::analysis {

Calibration calibrate(const std::vector<RunProfile>& runs, const CompareOptions& options) {
    Calibration c;
    stats::Runs stepRuns; // each run's steps: runToRunNoise compares their medians
    for (const RunProfile& p : runs) {
        CalibrationRun run { sideLabel(p), p.stepMs.size(), stats::median(p.stepMs), blockNoise(p.stepMs) };
        if (run.steps < kFewSteps)
            c.notes.push_back(run.label + " has only " + std::to_string(run.steps)
                + " measured steps: record at least 20 for a calibration that holds");
        c.runs.push_back(std::move(run));
        stepRuns.push_back(p.stepMs);
    }
    c.runToRunNoise = stats::runToRunNoise({ &stepRuns });
    double needed = 0.02;
    for (size_t i = 0; i < runs.size(); ++i)
        for (size_t j = i + 1; j < runs.size(); ++j) {
            CompareOptions pairOptions = options;
            pairOptions.maxRegression.reset(); // the default threshold: what an uncalibrated gate would use
            pairOptions.allowEnvChange = true;
            const CompareResult r = compareProfiles(runs[i], runs[j], pairOptions);
            CalibrationPair pair { i, j, r.stepTime.ratio, r.stepTime.low, r.stepTime.high, r.verdict,
                r.stepTime.threshold, 0 };
            if (pair.low > 0) pair.sameFrom = std::max(pair.high - 1, 1 / pair.low - 1);
            needed = std::max(needed, pair.sameFrom);
            c.falseAlarms += r.verdict == Verdict::Regressed || r.verdict == Verdict::Improved;
            if (!r.environment.changed.empty())
                c.notes.push_back(c.runs[i].label + " and " + c.runs[j].label
                    + " ran in different environments: a calibration measures one machine");
            c.pairs.push_back(pair);
        }
    // Rounded up to a whole percent: a threshold is a policy, not a measurement to three digits.
    c.suggested = std::ceil(needed * 100 - 1e-9) / 100;
    return c;
}

void writeCalibrationText(std::ostream& out, const Calibration& c) {
    out << "tuneup compare --calibrate: " << c.runs.size() << " runs of the same program, " << c.pairs.size()
        << " pairs\n";
    for (const CalibrationRun& r : c.runs) {
        out << "  " << r.label << ": " << r.steps << " steps, median "
            << formatDuration(int64_t(std::llround(r.medianMs * 1e6)));
        if (r.blockNoise) out << ", within-run noise " << formatPercent(*r.blockNoise);
        out << "\n";
    }
    if (c.runToRunNoise) out << "run-to-run noise (the runs' medians): " << formatPercent(*c.runToRunNoise) << "\n";
    out << "pairs (NEW / BASE, 95% CI; verdict at the default threshold):\n";
    for (const CalibrationPair& p : c.pairs)
        out << "  " << c.runs[p.base].label << " -> " << c.runs[p.now].label << ": " << ratioText(p.ratio) << " ("
            << ratioText(p.low) << "-" << ratioText(p.high) << "), " << verdictName(p.verdict) << " at "
            << formatPercent(p.threshold) << "; same from " << formatPercent(std::ceil(p.sameFrom * 100 - 1e-9) / 100)
            << "\n";
    out << "false alarms at the default threshold: " << c.falseAlarms << " of " << c.pairs.size() << " pairs\n";
    out << "suggested: --max-regression " << formatPercent(c.suggested)
        << " (every pair of these runs reads \"same\" under it)\n";
    for (const std::string& n : c.notes)
        out << "note: " << n << "\n";
}

void writeCalibrationJson(std::ostream& os, const Calibration& c, const std::string& toolVersion) {
    rapidjson::OStreamWrapper stream(os);
    rapidjson::PrettyWriter<rapidjson::OStreamWrapper> w(stream);
    w.SetIndent(' ', 2);
    const auto str = [&w](const std::string& s) {
        const std::string clean = validUtf8(s);
        w.String(clean.c_str(), rapidjson::SizeType(clean.size()));
    };
    w.StartObject();
    w.Key("schema_version");
    w.Int(kCompareSchemaVersion);
    w.Key("tool_version");
    str(toolVersion);
    w.Key("runs");
    w.StartArray();
    for (const CalibrationRun& r : c.runs) {
        w.StartObject();
        w.Key("input");
        str(r.label);
        w.Key("steps");
        w.Uint64(r.steps);
        w.Key("median_ms");
        w.Double(r.medianMs);
        w.Key("block_noise");
        if (r.blockNoise)
            w.Double(*r.blockNoise);
        else
            w.Null();
        w.EndObject();
    }
    w.EndArray();
    w.Key("pairs");
    w.StartArray();
    for (const CalibrationPair& p : c.pairs) {
        w.StartObject();
        w.Key("base");
        w.Uint64(p.base);
        w.Key("new");
        w.Uint64(p.now);
        w.Key("ratio");
        w.Double(p.ratio);
        w.Key("ratio_ci");
        w.StartArray();
        w.Double(p.low);
        w.Double(p.high);
        w.EndArray();
        w.Key("verdict");
        str(std::string(verdictName(p.verdict)));
        w.Key("threshold");
        w.Double(p.threshold);
        w.Key("same_from");
        w.Double(p.sameFrom);
        w.EndObject();
    }
    w.EndArray();
    w.Key("run_to_run_noise");
    if (c.runToRunNoise)
        w.Double(*c.runToRunNoise);
    else
        w.Null();
    w.Key("false_alarms");
    w.Uint64(c.falseAlarms);
    w.Key("suggested_max_regression");
    w.Double(c.suggested);
    w.Key("notes");
    w.StartArray();
    for (const std::string& n : c.notes)
        str(n);
    w.EndArray();
    w.EndObject();
    os << "\n";
}

} // namespace tuneup::analysis
