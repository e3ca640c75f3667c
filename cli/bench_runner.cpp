#include "bench_runner.h"

#include "all_rules.h"
#include "bench/bench_measure.h"
#include "record_command.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <rapidjson/document.h>
#include <unistd.h>

namespace tuneup::cli {

using namespace analysis;

namespace {

// The variables bench sets for one run and takes away after it (runRecord passes tuneup's environment
// on to the command).
class RunEnvironment {
public:
    explicit RunEnvironment(const BenchRunSpec& spec) {
        std::string fixes;
        for (const FixSpec& f : spec.fixes)
            fixes += (fixes.empty() ? "" : ",") + f.text();
        set("TUNEUP_BENCH_REPORT", spec.report);
        set("TUNEUP_FIX", fixes);
        set("TUNEUP_BENCH_STOP_AFTER", std::to_string(spec.stopAfter));
        set("TUNEUP_BENCH_STEP_RANGE", spec.stepRange.empty() ? "step" : spec.stepRange);
    }
    ~RunEnvironment() {
        for (const auto& [name, old] : m_saved)
            if (old)
                setenv(name.c_str(), old->c_str(), 1);
            else
                unsetenv(name.c_str());
    }
    RunEnvironment(const RunEnvironment&) = delete;
    RunEnvironment& operator=(const RunEnvironment&) = delete;

private:
    void set(const char* name, const std::string& value) {
        const char* old = getenv(name);
        m_saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
        setenv(name, value.c_str(), 1);
    }
    std::vector<std::pair<std::string, std::optional<std::string>>> m_saved;
};

// stdout and stderr go to the run's log while it runs: the program's output and record's lines, which
// would bury the bench's own progress.
class OutputToLog {
public:
    explicit OutputToLog(const std::string& log) {
        fflush(stdout);
        fflush(stderr);
        const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) return; // the output stays where it was: noisier, not wrong
        m_out = dup(STDOUT_FILENO);
        m_err = dup(STDERR_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    ~OutputToLog() {
        fflush(stdout);
        fflush(stderr);
        if (m_out >= 0) dup2(m_out, STDOUT_FILENO), close(m_out);
        if (m_err >= 0) dup2(m_err, STDERR_FILENO), close(m_err);
    }
    OutputToLog(const OutputToLog&) = delete;
    OutputToLog& operator=(const OutputToLog&) = delete;

private:
    int m_out = -1, m_err = -1;
};

std::string text(const rapidjson::Value& object, const char* name) {
    const auto it = object.FindMember(name);
    return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// The JSON lines the program wrote (python/tuneup_bench.py, agent/bench_control.cpp); a line that is
// not one (a process killed mid-write) is skipped.
void readReport(const std::string& path, BenchRunResult& result) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        rapidjson::Document doc;
        doc.Parse(line.c_str(), line.size());
        if (doc.HasParseError() || !doc.IsObject()) continue;
        const std::string event = text(doc, "event");
        if (event == "start" || event == "torch") {
            result.python = true;
            for (const char* key : { "python", "torch", "cuda", "device", "device_name" })
                if (const std::string value = text(doc, key); !value.empty()) result.program[key] = value;
        } else if (event == "fix") {
            BenchFixOutcome outcome { text(doc, "fix"), text(doc, "status"), text(doc, "detail") };
            // Applied once is applied; a not-applied line only counts while nothing applied.
            auto same = std::find_if(result.fixes.begin(), result.fixes.end(),
                [&](const BenchFixOutcome& f) { return f.fix == outcome.fix; });
            if (same == result.fixes.end())
                result.fixes.push_back(outcome);
            else if (outcome.status == "applied" && same->status != "applied")
                *same = outcome;
        } else if (event == "stop") {
            result.stopped = true;
        } else if (event == "losses") {
            const auto values = doc.FindMember("values");
            if (values != doc.MemberEnd() && values->value.IsArray())
                for (const auto& v : values->value.GetArray())
                    if (v.IsNumber()) result.losses.push_back(v.GetDouble());
        }
    }
}

} // namespace

std::string tailOf(const std::string& path, size_t lines) {
    std::ifstream in(path);
    std::vector<std::string> last;
    std::string line;
    while (std::getline(in, line)) {
        // record's own lines about the file say nothing about why the program failed.
        if (line.starts_with("tuneup: recorded ") || line.starts_with("tuneup:   ")) continue;
        last.push_back(line.size() > 300 ? line.substr(0, 300) + "..." : line);
        if (last.size() > lines) last.erase(last.begin());
    }
    std::string out;
    for (const std::string& l : last)
        out += "\n    " + l;
    return out;
}

BenchRunResult runBenchRun(const BenchRunSpec& spec) {
    BenchRunResult result;
    unlink(spec.report.c_str());
    RecordOptions record;
    record.output = spec.recording;
    record.force = true;
    record.command = spec.command;
    const auto start = std::chrono::steady_clock::now();
    {
        RunEnvironment environment(spec);
        OutputToLog output(spec.log);
        result.exitCode = runRecord(record);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    readReport(spec.report, result);
    if (access(spec.recording.c_str(), F_OK) != 0) {
        result.started = result.exitCode != 126 && result.exitCode != 127;
        result.problem = result.started ? "exited with code " + std::to_string(result.exitCode)
                + " and wrote no recording; its last lines:" + tailOf(spec.log, 8)
                                        : "could not start:" + tailOf(spec.log, 4);
        return result;
    }
    result.started = true;
    if (result.exitCode != 0) {
        result.problem = (result.exitCode > 128 ? "ended by signal " + std::to_string(result.exitCode - 128)
                                                : "exited with code " + std::to_string(result.exitCode))
            + "; its last lines:" + tailOf(spec.log, 8);
        return result;
    }

    try {
        JobOptions options;
        if (spec.advise) options.builtinRules = rules::builtinRules;
        options.advise = spec.advise;
        options.stepRange = spec.stepRange;
        options.threads = 1;
        result.job = openJob({ spec.recording }, options);
        if (result.job->analyses.empty()) {
            result.problem = "its recording holds no process to measure";
            return result;
        }
        const RunSteps steps = runSteps(result.job->analyses.front(), result.stopped);
        result.stepMs = steps.stepMs;
        result.stepSource = steps.source;
        if (steps.stepMs.empty())
            result.problem = "no training steps found in its recording ("
                + result.job->analyses.front().steps.detection.detail
                + "); mark them with a range and name it with --step-range";
    } catch (const std::exception& e) {
        result.problem = std::string("its recording could not be read: ") + e.what();
    }
    if (!spec.advise) result.job.reset(); // only the first baseline run's analysis is kept
    return result;
}

} // namespace tuneup::cli
