#include "bench_session.h"

#include "bench/bench_measure.h"
#include "bench_runner.h"
#include "units.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

namespace tuneup::cli {

using namespace analysis;

namespace {

// One side of the bench: the baseline (index 0) or a candidate.
struct Arm {
    BenchCandidate candidate; // name, kind, fixes, command, finding; the statistics come at the end
    std::vector<FixSpec> fixes;
    std::vector<std::string> command;
    std::string label; // file names: baseline, fix1, command
    std::vector<BenchRunResult> runs;
    std::vector<int> order; // parallel to runs: the run's place in the whole bench
    bool done = false; // no more runs: not applicable, or failed
};

std::string fixesText(const std::vector<FixSpec>& fixes) {
    std::string text;
    for (const FixSpec& f : fixes)
        text += (text.empty() ? "" : ",") + f.text();
    return text;
}

std::string joinWords(const std::vector<std::string>& words) {
    std::string text;
    for (const std::string& w : words)
        text += (text.empty() ? "" : " ") + w;
    return text;
}

class Progress {
public:
    Progress(bool terminal, size_t total)
        : m_terminal(terminal)
        , m_total(total) { }
    void starting(size_t index, const std::string& what) {
        m_line = "tuneup bench: run " + std::to_string(index) + " of about " + std::to_string(m_total) + ": " + what;
        if (m_terminal) fprintf(stderr, "\r\033[K%s ...", m_line.c_str());
    }
    void finished(const BenchRunResult& run) {
        std::string end = formatElapsed(int64_t(run.seconds * 1e9));
        if (!run.usable())
            end += ", not used: " + run.problem.substr(0, run.problem.find(';'));
        else if (!run.stepMs.empty()) {
            std::vector<double> steps = run.stepMs;
            std::nth_element(steps.begin(), steps.begin() + ptrdiff_t(steps.size() / 2), steps.end());
            end += ", " + std::to_string(run.stepMs.size()) + " steps, median "
                + formatDuration(int64_t(steps[steps.size() / 2] * 1e6));
        }
        fprintf(stderr, m_terminal ? "\r\033[K%s: %s" : "%s: %s\n", m_line.c_str(), end.c_str());
        fflush(stderr);
    }
    void done() {
        if (m_terminal) fprintf(stderr, "\n");
    }

private:
    bool m_terminal;
    size_t m_total;
    std::string m_line;
};

std::vector<std::pair<std::string, std::string>> environmentOf(const BenchRunResult& first, const Job* job) {
    std::vector<std::pair<std::string, std::string>> env;
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) env.emplace_back("host", host);
    struct utsname u { };
    if (uname(&u) == 0) {
        env.emplace_back("os", std::string(u.sysname) + " " + u.release);
        env.emplace_back("machine", u.machine);
    }
    env.emplace_back("cpus", std::to_string(std::max(1u, std::thread::hardware_concurrency())));
    for (const char* key : { "python", "torch", "cuda", "device", "device_name" })
        if (const auto it = first.program.find(key); it != first.program.end()) env.emplace_back(key, it->second);
    if (job && !job->models.empty()) {
        std::string gpus;
        for (const DeviceInfo& d : job->models.front().devices)
            gpus += (gpus.empty() ? "" : ", ") + d.name;
        env.emplace_back("gpus", gpus.empty() ? "none recorded" : gpus);
    }
    env.emplace_back("program", first.python ? "python (bootstrap)" : "native (LibTorch or other)");
    return env;
}

// What became of each of a candidate's fixes: as the program reported them, and for those it never
// reported, why (the fix's catalogue says what not reaching it means).
std::vector<BenchFixOutcome> outcomesOf(const std::vector<FixSpec>& fixes, const std::vector<BenchRunResult>& runs) {
    std::vector<BenchFixOutcome> outcomes;
    for (const FixSpec& fix : fixes) {
        BenchFixOutcome best { fix.name, "unused", std::string(findBenchFix(fix.name)->unused) };
        for (const BenchRunResult& run : runs)
            for (const BenchFixOutcome& o : run.fixes)
                if (o.fix == fix.name && (best.status != "applied"))
                    if (o.status == "applied" || best.status == "unused") best = o;
        outcomes.push_back(best);
    }
    return outcomes;
}

bool anyApplied(const std::vector<BenchFixOutcome>& outcomes) {
    return std::any_of(
        outcomes.begin(), outcomes.end(), [](const BenchFixOutcome& o) { return o.status == "applied"; });
}

std::string notAppliedWhy(const std::vector<BenchFixOutcome>& outcomes) {
    std::string why;
    for (const BenchFixOutcome& o : outcomes)
        why += (why.empty() ? "" : "; ") + o.fix + ": " + o.detail;
    return "did not apply (" + why + "): the runs would measure the baseline against itself";
}

// The candidates of automatic mode: a fix for each finding that has one (the first of equal fixes).
void planAutomatic(const Job& job, bool python, std::vector<Arm>& arms, BenchResult& result) {
    const RankSummary& rank = job.report.ranks.front();
    const int computeMajor = job.models.empty() || job.models.front().devices.empty()
        ? 0
        : job.models.front().devices.front().computeMajor;
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    for (const Finding* f : job.report.ranked()) {
        const FindingFix answer = fixForFinding(*f, rank, python, cpus, computeMajor);
        if (answer.fixes.empty()) {
            if (std::none_of(result.notBenched.begin(), result.notBenched.end(),
                    [&](const BenchSkippedFinding& s) { return s.rule == f->ruleId; }))
                result.notBenched.push_back({ f->ruleId, answer.whyNot });
            continue;
        }
        const std::string name = fixesText(answer.fixes);
        if (std::any_of(arms.begin(), arms.end(), [&](const Arm& a) { return a.candidate.name == name; })) continue;
        Arm arm;
        arm.fixes = answer.fixes;
        arms.push_back(std::move(arm));
    }
}

// The run's steps must be as many as the baseline's: a candidate that stops early or runs longer does
// not measure the same work.
size_t expectedSteps(const Arm& baseline) {
    std::map<size_t, size_t> counts;
    for (const BenchRunResult& r : baseline.runs)
        if (r.usable()) ++counts[r.stepMs.size()];
    size_t best = 0, seen = 0;
    for (const auto& [steps, n] : counts)
        if (n > seen) best = steps, seen = n;
    return best;
}

} // namespace

BenchOutcome runBenchSession(const BenchSettings& settings) {
    BenchOutcome outcome;
    BenchResult& result = outcome.result;
    result.toolVersion = settings.toolVersion;
    result.command = settings.command;
    result.steps = settings.steps;
    result.warmup = settings.warmup;
    result.runs = settings.runs;
    result.maxTimeSeconds = settings.maxTimeSeconds;
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed
        = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    // The steps a run makes before bench ends it: warm-up, measured, and one more that the stop cuts.
    const size_t stopAfter = settings.warmup + settings.steps + 1;

    std::vector<Arm> arms(1);
    arms[0].label = "baseline";
    arms[0].command = settings.command;
    const auto spec = [&](const Arm& arm, size_t runIndex, bool advise) {
        BenchRunSpec s;
        s.command = arm.command;
        s.fixes = arm.fixes;
        const std::string stem = settings.runsDir + "/" + arm.label + ".run" + std::to_string(runIndex + 1);
        s.recording = stem + ".db";
        s.log = stem + ".log";
        s.report = stem + ".jsonl";
        s.stopAfter = stopAfter;
        s.stepRange = settings.stepRange;
        s.advise = advise;
        return s;
    };

    // The first baseline run: recorded, advised, and the first of the baseline's runs.
    const bool automatic = settings.fixCandidates.empty() && settings.candidateCommand.empty();
    result.mode = automatic ? "automatic" : settings.candidateCommand.empty() ? "fixes" : "candidate";
    size_t expectedTotal = settings.runs
        * (automatic ? 2 : 1 + settings.fixCandidates.size() + (settings.candidateCommand.empty() ? 0 : 1));
    Progress progress(settings.progressOnTerminal, expectedTotal);
    int order = 0;
    progress.starting(1, "baseline (recorded and advised)");
    BenchRunResult first = runBenchRun(spec(arms[0], 0, true));
    progress.finished(first);
    if (!first.usable()) {
        progress.done();
        outcome.fatal = "the baseline " + joinWords(settings.command) + " " + first.problem
            + "\n(the program must run to the end, or for at least " + std::to_string(stopAfter)
            + " training steps; its recording and log are in " + settings.runsDir + ")";
        outcome.runFailed = true;
        return outcome;
    }
    result.environment = environmentOf(first, first.job.get());
    const bool python = first.python;
    const Job& job = *first.job;
    arms[0].order.push_back(++order);

    // The candidates.
    for (const auto& fixes : settings.fixCandidates) {
        Arm arm;
        arm.fixes = fixes;
        arms.push_back(std::move(arm));
    }
    if (automatic) planAutomatic(job, python, arms, result);
    if (!settings.candidateCommand.empty()) {
        Arm arm;
        arm.command = settings.candidateCommand;
        arm.candidate.kind = "command";
        arm.candidate.name = joinWords(settings.candidateCommand);
        arm.candidate.command = settings.candidateCommand;
        arm.label = "command";
        arms.push_back(std::move(arm));
    }
    const std::vector<const Finding*> findings = job.report.ranked();
    const RankSummary& rank = job.report.ranks.front();
    const int computeMajor = job.models.empty() || job.models.front().devices.empty()
        ? 0
        : job.models.front().devices.front().computeMajor;
    for (size_t i = 1; i < arms.size(); ++i) {
        Arm& arm = arms[i];
        if (arm.candidate.kind == "command") continue;
        arm.command = settings.command;
        arm.candidate.kind = "fix";
        arm.candidate.name = fixesText(arm.fixes);
        arm.label = "fix" + std::to_string(i);
        for (const FixSpec& f : arm.fixes)
            arm.candidate.fixes.push_back(f.text());
        const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
        if (const Finding* f = findingForFixes(arm.fixes, findings, rank, python, cpus, computeMajor)) {
            arm.candidate.finding = f->ruleId;
            if (f->gain && f->gain->stepShare > 0 && f->gain->stepShare < 1)
                arm.candidate.estimatedSpeedup = 1 / (1 - f->gain->stepShare);
        }
        // A LibTorch program is reached only through the agent's switches.
        if (!python)
            for (const FixSpec& f : arm.fixes)
                if (!findBenchFix(f.name)->libtorch) {
                    arm.done = true;
                    arm.candidate.verdict = BenchVerdict::NotApplied;
                    arm.candidate.why = "not a Python program (no Python bootstrap ran): " + f.name
                        + " needs a change in the code; bench your edited program with --candidate 'CMD'";
                    break;
                }
    }
    if (automatic && arms.size() == 1)
        result.notes.push_back(findings.empty() ? "the baseline raised no finding: nothing to bench"
                                                : "no finding of the baseline has a fix tuneup can apply from outside "
                                                  "the program (see Not benched)");

    // Interleaved rounds: baseline then candidates, then backwards (ABBA for one candidate).
    arms[0].runs.push_back(std::move(first));
    size_t runNumber = 1;
    bool stop = false;
    for (size_t round = 0; round < settings.runs && !stop && arms.size() > 1; ++round) {
        std::vector<size_t> sequence(arms.size());
        for (size_t i = 0; i < arms.size(); ++i)
            sequence[i] = round % 2 == 0 ? i : arms.size() - 1 - i;
        for (size_t index : sequence) {
            Arm& arm = arms[index];
            if (round == 0 && index == 0) continue; // the advised run
            if (arm.done) continue;
            // Would the run fit in --max-time? Its arm's longest run so far (or the baseline's) says.
            double estimate = 0;
            for (const BenchRunResult& r : (arm.runs.empty() ? arms[0].runs : arm.runs))
                estimate = std::max(estimate, r.seconds);
            if (elapsed() + estimate > settings.maxTimeSeconds) {
                result.notes.push_back("--max-time (" + formatElapsed(int64_t(settings.maxTimeSeconds * 1e9))
                    + ") reached after " + std::to_string(runNumber) + " runs: fewer runs than --runs were made");
                stop = true;
                break;
            }
            progress.starting(++runNumber, index == 0 ? "baseline" : arm.candidate.name);
            BenchRunResult run = runBenchRun(spec(arm, arm.runs.size(), false));
            progress.finished(run);
            const bool interrupted = run.exitCode == 128 + 2; // Ctrl-C
            arm.runs.push_back(std::move(run));
            arm.order.push_back(++order);
            const BenchRunResult& done = arm.runs.back();
            if (interrupted) {
                result.notes.push_back("interrupted (SIGINT): the runs done are measured");
                outcome.runFailed = true;
                stop = true;
                break;
            }
            if (index == 0) continue;
            if (!done.usable()) {
                arm.done = true; // a candidate that fails once is not run again
                continue;
            }
            if (arm.candidate.kind == "fix" && arm.runs.size() == 1) {
                const auto outcomes = outcomesOf(arm.fixes, arm.runs);
                if (!anyApplied(outcomes)) {
                    arm.done = true;
                    arm.candidate.verdict = BenchVerdict::NotApplied;
                    arm.candidate.why = notAppliedWhy(outcomes);
                }
            }
        }
    }
    progress.done();

    // Measure each candidate against the baseline's usable runs.
    const size_t expected = expectedSteps(arms[0]);
    MeasureOptions measure;
    measure.warmup = settings.warmup;
    measure.steps = settings.steps;
    const auto usableRuns = [&](Arm& arm, const char* side, std::vector<ArmRun>& runs, std::vector<BenchRun>& listed) {
        for (size_t i = 0; i < arm.runs.size(); ++i) {
            BenchRunResult& r = arm.runs[i];
            BenchRun row;
            row.arm = side;
            row.order = arm.order[i];
            row.exitCode = r.exitCode;
            row.steps = r.stepMs.size();
            row.seconds = r.seconds;
            if (r.usable() && r.stepMs.size() != expected)
                r.problem = "made " + std::to_string(r.stepMs.size()) + " steps where the baseline made "
                    + std::to_string(expected) + ": it does not run the same work";
            row.used = r.usable();
            row.note = r.usable()
                ? (r.stopped ? "stopped after " + std::to_string(stopAfter) + " steps" : "ran to its end")
                : r.problem;
            if (!r.usable()) outcome.runFailed = true;
            listed.push_back(row);
            if (r.usable()) runs.push_back({ r.stepMs, r.losses });
        }
    };
    std::vector<ArmRun> baselineRuns;
    std::vector<BenchRun> baselineRows;
    usableRuns(arms[0], "baseline", baselineRuns, baselineRows);
    bool longWarmup = false;
    for (size_t i = 1; i < arms.size(); ++i) {
        Arm& arm = arms[i];
        BenchCandidate c = arm.candidate;
        std::vector<ArmRun> candidateRuns;
        std::vector<BenchRun> rows;
        usableRuns(arm, "candidate", candidateRuns, rows);
        if (arm.candidate.kind == "fix") c.applied = outcomesOf(arm.fixes, arm.runs);
        c.runs = baselineRows;
        c.runs.insert(c.runs.end(), rows.begin(), rows.end());
        std::sort(c.runs.begin(), c.runs.end(), [](const BenchRun& a, const BenchRun& b) { return a.order < b.order; });
        if (c.verdict == BenchVerdict::NotApplied) {
            result.candidates.push_back(std::move(c));
            continue;
        }
        measure.withLoss = std::any_of(
            arm.fixes.begin(), arm.fixes.end(), [](const FixSpec& f) { return findBenchFix(f.name)->precision; });
        ArmMeasure baseMeasure, candMeasure;
        measureCandidate(baselineRuns, candidateRuns, measure, c, &baseMeasure, &candMeasure);
        // The per-run figures, in the runs' order among the used ones.
        for (auto [sideMeasure, side] :
            { std::pair { &baseMeasure, "baseline" }, std::pair { &candMeasure, "candidate" } }) {
            size_t k = 0;
            for (BenchRun& r : c.runs)
                if (r.arm == side && r.used && k < sideMeasure->measured.size()) {
                    r.measured = sideMeasure->measured[k];
                    r.stepMs = sideMeasure->centerMs[k++];
                }
        }
        // Said when the long warm-up was a real one-time cost, not a loaded machine's slow first steps.
        longWarmup = longWarmup || (candMeasure.warmup > settings.warmup && c.oneTimeCostMs && *c.oneTimeCostMs > 0);
        if (c.verdict == BenchVerdict::Failed && candidateRuns.empty()) {
            const auto failed
                = std::find_if(arm.runs.begin(), arm.runs.end(), [](const BenchRunResult& r) { return !r.usable(); });
            if (failed != arm.runs.end()) c.why = "its run " + failed->problem;
        }
        if (arm.candidate.kind == "fix" && !anyApplied(c.applied) && c.verdict != BenchVerdict::Failed) {
            c.verdict = BenchVerdict::NotApplied;
            c.why = notAppliedWhy(c.applied);
        }
        result.candidates.push_back(std::move(c));
    }
    if (longWarmup)
        result.notes.push_back("the warm-up lasted longer than --warmup " + std::to_string(settings.warmup)
            + " steps in some runs: the steps it took were not measured (fewer measured steps); raise --warmup");
    result.elapsedSeconds = elapsed();
    return outcome;
}

} // namespace tuneup::cli
