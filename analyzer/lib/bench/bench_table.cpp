// `tuneup bench`'s table for people: text for a terminal, Markdown for a CI summary.

#include "bench/bench_result.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tuneup::analysis {

namespace {

std::string times(double x) {
    if (!std::isfinite(x)) return "?";
    char text[32];
    snprintf(text, sizeof text, x >= 10 ? "%.1fx" : "%.2fx", x);
    return text;
}

std::string ms(double value) {
    return std::isfinite(value) ? formatDuration(int64_t(std::llround(value * 1e6))) : "?";
}

std::string joined(const std::vector<std::string>& words) {
    std::string text;
    for (const std::string& w : words)
        text += (text.empty() ? "" : " ") + (w.find_first_of(" \t'\"") == std::string::npos ? w : "'" + w + "'");
    return text;
}

struct Row {
    std::string name, verdict, speedup, ci, steps, estimate, finding;
};

// A long command as a candidate's name is cut in the middle for the table (the JSON has it whole).
std::string shortName(const std::string& name) {
    constexpr size_t kMax = 48;
    return name.size() <= kMax ? name : name.substr(0, 20) + "..." + name.substr(name.size() - (kMax - 23));
}

Row row(const BenchCandidate& c) {
    Row r;
    r.name = shortName(c.name);
    r.verdict = std::string(benchVerdictName(c.verdict));
    r.speedup = c.speedup ? times(*c.speedup) : "-";
    r.ci = c.speedupCi ? times(c.speedupCi->first) + "-" + times(c.speedupCi->second) : "-";
    r.steps = c.baselineStepMs.n && c.candidateStepMs.n
        ? ms(c.baselineStepMs.meanMs) + " -> " + ms(c.candidateStepMs.meanMs)
        : "-";
    r.estimate = c.estimatedSpeedup ? times(*c.estimatedSpeedup) : "-";
    r.finding = c.finding.value_or("-");
    return r;
}

// What needs saying about a candidate beyond its row, one line each.
std::vector<std::string> notes(const BenchCandidate& c) {
    std::vector<std::string> lines;
    if (!c.why.empty()) lines.push_back(c.why);
    for (const BenchFixOutcome& a : c.applied)
        if (a.status != "applied")
            lines.push_back(a.fix + " " + (a.status == "unused" ? "never applied" : "not applied")
                + (a.detail.empty() ? "" : ": " + a.detail));
    if (c.oneTimeCostMs && *c.oneTimeCostMs > 0) {
        std::string line = "warm-up " + std::to_string(c.warmupSteps) + (c.warmupSteps == 1 ? " step" : " steps");
        {
            line += "; one-time cost " + ms(*c.oneTimeCostMs) + " beyond the baseline's";
            if (c.breakEvenSteps) {
                char steps[32];
                snprintf(steps, sizeof steps, "%.0f", std::ceil(*c.breakEvenSteps));
                line += ", paid back after " + std::string(steps) + " steps";
            }
        }
        lines.push_back(line);
    }
    if (c.lossDelta) {
        char text[64];
        snprintf(text, sizeof text, "%+.4g", *c.lossDelta);
        lines.push_back(std::string("loss ") + text + " (mean over the measured steps, candidate - baseline)");
    }
    // Runs left out, unless the verdict already says why (a failed candidate quotes its first failure).
    for (const BenchRun& r : c.runs)
        if (!r.used && !r.note.empty() && (r.arm == "baseline" || c.verdict != BenchVerdict::Failed))
            lines.push_back(r.arm + " run " + std::to_string(r.order) + " not used: " + r.note);
    return lines;
}

std::string header(const BenchResult& result) {
    std::string text = std::to_string(result.steps) + " steps measured per run after " + std::to_string(result.warmup)
        + " warm-up steps; " + std::to_string(result.runs) + " runs a side, interleaved";
    if (result.elapsedSeconds > 0) text += "; " + formatElapsed(int64_t(result.elapsedSeconds * 1e9));
    return text;
}

const char* colorOf(BenchVerdict v) {
    switch (v) {
    case BenchVerdict::Faster:
        return "\033[32m";
    case BenchVerdict::Slower:
    case BenchVerdict::Failed:
        return "\033[31m";
    default:
        return "";
    }
}

} // namespace

void writeBenchText(std::ostream& out, const BenchResult& result, bool color) {
    out << "tuneup bench: " << joined(result.command) << "\n" << header(result) << "\n\n";
    std::vector<Row> rows
        = { { "candidate", "verdict", "speed-up", "95% CI", "step: baseline -> candidate", "estimate", "finding" } };
    for (const BenchCandidate& c : result.candidates)
        rows.push_back(row(c));
    size_t w[6] = {};
    for (const Row& r : rows) {
        const std::string* cells[] = { &r.name, &r.verdict, &r.speedup, &r.ci, &r.steps, &r.estimate };
        for (size_t i = 0; i < 6; ++i)
            w[i] = std::max(w[i], cells[i]->size());
    }
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const std::string* cells[] = { &r.name, &r.verdict, &r.speedup, &r.ci, &r.steps, &r.estimate };
        std::string line;
        for (size_t k = 0; k < 6; ++k) {
            std::string cell = *cells[k] + std::string(w[k] - cells[k]->size() + 2, ' ');
            if (k == 1 && i > 0 && color && *colorOf(result.candidates[i - 1].verdict))
                cell = colorOf(result.candidates[i - 1].verdict) + *cells[k] + "\033[0m"
                    + std::string(w[k] - cells[k]->size() + 2, ' ');
            line += cell;
        }
        out << line << r.finding << "\n";
    }
    bool first = true;
    for (const BenchCandidate& c : result.candidates)
        for (const std::string& line : notes(c)) {
            out << (first ? "\n" : "") << shortName(c.name) << ": " << line << "\n";
            first = false;
        }
    if (!result.notBenched.empty()) {
        out << "\nNot benched:\n";
        for (const BenchSkippedFinding& s : result.notBenched)
            out << "  " << s.rule << ": " << s.why << "\n";
    }
    for (const std::string& note : result.notes)
        out << "note: " << note << "\n";
}

void writeBenchMarkdown(std::ostream& out, const BenchResult& result) {
    // Pipes in a command or a reason would split a table cell.
    const auto cell = [](std::string s) {
        for (size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2)
            s.replace(at, 1, "\\|");
        return s;
    };
    out << "## tuneup bench\n\n`" << joined(result.command) << "`: " << header(result) << ".\n\n";
    out << "| candidate | verdict | speed-up | 95% CI | step: baseline → candidate | estimate | finding |\n";
    out << "|---|---|---|---|---|---|---|\n";
    for (const BenchCandidate& c : result.candidates) {
        const Row r = row(c);
        out << "| `" << cell(r.name) << "` | " << (c.verdict == BenchVerdict::Faster ? "**faster**" : r.verdict)
            << " | " << r.speedup << " | " << r.ci << " | " << r.steps << " | " << r.estimate << " | "
            << cell(r.finding) << " |\n";
    }
    bool first = true;
    for (const BenchCandidate& c : result.candidates)
        for (const std::string& line : notes(c)) {
            out << (first ? "\n" : "") << "- `" << cell(c.name) << "`: " << line << "\n";
            first = false;
        }
    if (!result.notBenched.empty()) {
        out << "\nNot benched:\n\n";
        for (const BenchSkippedFinding& s : result.notBenched)
            out << "- `" << s.rule << "`: " << s.why << "\n";
    }
    for (const std::string& note : result.notes)
        out << "\n> " << note << "\n";
}

} // namespace tuneup::analysis
