// The `tuneup` command: record a run, say what a trace holds, advise on it.

#include "advise_command.h"
#include "export_command.h"
#include "import_command.h"
#include "info_command.h"
#include "record_command.h"

// GCC 12 at -O2 reports a false null dereference inside CLI11's inlined string code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kUsageError = 2;

constexpr const char* kExitCodes
    = "Exit codes:\n"
      "  0     success\n"
      "  1     a bad input file (missing, not a trace, damaged, too new)\n"
      "  2     a usage or set-up error (bad option, existing output, no agent): nothing ran\n"
      "  3     tuneup advise --fail-on: a finding at or above that severity\n"
      "  else  tuneup record returns the recorded command's exit code\n"
      "        (127: command not found; 128+N: it was ended by signal N)";

// record's usage line names the command it runs, which CLI11 cannot know.
class RecordFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App*, std::string name) const override {
        return "Usage: " + name + " [OPTIONS] [--] CMD ARGS...\n";
    }
};

} // namespace

int main(int argc, char** argv) {
    using namespace tuneup::cli;

    CLI::App app("tuneup: why is my training slow, and what do I change?\n\n"
                 "  tuneup record -o run.db -- python train.py --epochs 1\n"
                 "  tuneup info run.db\n"
                 "  tuneup advise run.db\n"
                 "  tuneup export run.db --format perfetto\n"
                 "  tuneup import report.sqlite -o run.db\n",
        "tuneup");
    app.set_version_flag("--version", std::string("tuneup ") + TUNEUP_VERSION);
    app.require_subcommand(1);
    app.footer(kExitCodes);

    RecordOptions record;
    CLI::App* recordCommand = app.add_subcommand(
        "record", "Run CMD ARGS... with the recording agent injected (no code change) and write a trace per process.");
    recordCommand->formatter(std::make_shared<RecordFormatter>());
    recordCommand
        ->add_option("-o,--output", record.output,
            "Trace file of the command; rank N writes FILE.rankN.db beside it, other processes FILE.pidN.db")
        ->capture_default_str();
    recordCommand->add_flag("-f,--force", record.force, "Replace an existing recording (its files are deleted)");
    recordCommand
        ->add_option("--trace", record.trace,
            "What to record, comma-separated: nvtx, torch (PyTorch settings, read during NVTX calls), cuda "
            "(= kernel,memcpy,memset,sync,runtime,driver), gemm (cuBLAS/cuBLASLt GEMM shapes), conv (cuDNN "
            "convolutions and how their algorithms were chosen), any of those, or none")
        ->capture_default_str();
    // Everything from the first positional on (or after --) is the command, its own options included.
    recordCommand->prefix_command();
    recordCommand->footer(
        "Examples:\n"
        "  tuneup record -o run.db -- python train.py --epochs 1\n"
        "  tuneup record -o run.db -- torchrun --nproc-per-node 8 train.py   # run.rank0.db ... run.rank7.db\n"
        "  tuneup record --trace nvtx,kernel --force -- ./train_app\n\n"
        + std::string(kExitCodes));

    InfoOptions info;
    CLI::App* infoCommand = app.add_subcommand("info",
        "Say what trace files hold: command, process, rank, host, when and how long, what was captured and why "
        "not, row counts per table, drops, GPUs");
    infoCommand->add_option("files", info.files, "tuneup trace files (.db)")->required();
    infoCommand->add_flag("--check", info.check,
        "Check every page of the file (PRAGMA quick_check) even when it is large; small files are always checked");
    infoCommand->footer("Examples:\n"
                        "  tuneup info run.db\n"
                        "  tuneup info run.rank*.db\n\n"
        + std::string(kExitCodes));

    tuneup::cli::AdviseOptions advise;
    CLI::App* adviseCommand = app.add_subcommand("advise",
        "Find what slows the training down and what to change: runs the rules over traces (tuneup recordings, "
        "PyTorch profiler / Kineto JSON, Nsight Systems SQLite exports); several files are one job, one per rank");
    adviseCommand
        ->add_option(
            "files", advise.files, "trace files: run.db, run.rank*.db, trace.pt.trace.json[.gz], report.sqlite")
        ->required();
    adviseCommand->add_option("--format", advise.format, "text (fits a screen), json, markdown or html")
        ->capture_default_str();
    adviseCommand->add_option("-o,--output", advise.output, "write the report to this file instead of stdout");
    adviseCommand->add_option(
        "--fail-on", advise.failOn, "exit 3 when a finding is this severe or worse: info, warning or error (for CI)");
    adviseCommand->add_option("--step-range", advise.stepRange,
        "name of the range that marks one training step (default: ProfilerStep#N, tuneup.step, step, the "
        "optimizer's ranges, else the repeating kernel pattern)");
    adviseCommand->add_option("--rules", advise.userRules,
        "also run your own SQL rules: a .sql file or a folder of them (see docs/user-rules.md)");
    adviseCommand->footer("Examples:\n"
                          "  tuneup advise run.db\n"
                          "  tuneup advise worker0.pt.trace.json.gz --format html -o report.html\n"
                          "  tuneup advise report.sqlite          # nsys export --type sqlite report.nsys-rep\n"
                          "  tuneup advise run.rank*.db --format json -o advice.json --fail-on warning\n"
                          "  tuneup advise run.db --rules my-rules/\n\n"
        + std::string(kExitCodes));

    ExportOptions exportOptions;
    CLI::App* exportCommand = app.add_subcommand("export",
        "Write a trace of any readable format as Chrome trace JSON for Perfetto UI (ui.perfetto.dev) and "
        "chrome://tracing, with its steps and the advisor's findings marked");
    exportCommand->add_option("file", exportOptions.input, "a trace file: run.db, trace.pt.trace.json[.gz]")
        ->required();
    exportCommand->add_option("--format", exportOptions.format, "perfetto (Chrome trace JSON)")->capture_default_str();
    exportCommand->add_option("-o,--output", exportOptions.output,
        "where to write it (default: FILE's name + .perfetto.json in the current folder; - for stdout)");
    exportCommand->add_flag("-f,--force", exportOptions.force, "Replace an existing output");
    exportCommand->add_flag("!--no-findings", exportOptions.findings, "Do not run the rules (no findings track)");
    exportCommand->add_option("--step-range", exportOptions.stepRange, "name of the range that marks one step");
    exportCommand->footer("Examples:\n"
                          "  tuneup export run.db                          # -> run.perfetto.json\n"
                          "  tuneup export run.rank3.db --format perfetto -o rank3.json\n\n"
        + std::string(kExitCodes));

    tuneup::cli::ImportOptions importOptions;
    CLI::App* importCommand = app.add_subcommand("import",
        "Write a trace of any readable format (PyTorch profiler / Kineto JSON, Nsight Systems SQLite export, tuneup "
        "file) as a tuneup file, which tuneup-gui and sqlite3 open (schema: docs/schema.md)");
    importCommand->add_option("file", importOptions.input, "a trace: trace.pt.trace.json[.gz], report.sqlite, run.db")
        ->required();
    importCommand->add_option("-o,--output", importOptions.output, "the tuneup file to write (.db)")->required();
    importCommand->add_flag("-f,--force", importOptions.force,
        "Replace an existing tuneup file (a file of another kind is never replaced)");
    importCommand->footer(
        "Examples:\n"
        "  tuneup import report.sqlite -o run.db                 # nsys export --type sqlite report.nsys-rep\n"
        "  tuneup import worker0.pt.trace.json.gz -o worker0.db --force\n"
        "  sqlite3 run.db 'SELECT count(*), sum(end_ns - start_ns) FROM kernels'\n\n"
        "CPU operators, GPU annotations, collectives, flows and Python frames have no table in the tuneup\n"
        "schema: they are counted in the file's stats (export.not_written.*) and left out.\n\n"
        + std::string(kExitCodes));

    std::string userRules;
    CLI::App* rulesCommand
        = app.add_subcommand("rules", "List the advisor's rules: id, what each detects, what it needs");
    rulesCommand->add_option("--rules", userRules, "also list (and check) your own SQL rules: a .sql file or a folder");

    if (argc < 2) {
        fprintf(stderr, "%s", app.help().c_str());
        return kUsageError;
    }

    // `record ... -- CMD ARGS`: everything after the first -- is the command, untouched by the option parser.
    std::vector<std::string> args(argv + 1, argv + argc);
    std::vector<std::string> afterDashes;
    const auto subcommand
        = std::find_if(args.begin(), args.end(), [](const std::string& a) { return !a.starts_with("-"); });
    if (const auto dashes = std::find(subcommand, args.end(), "--");
        subcommand != args.end() && *subcommand == "record" && dashes != args.end()) {
        afterDashes.assign(dashes + 1, args.end());
        args.erase(dashes, args.end());
    }
    std::reverse(args.begin(), args.end()); // CLI11 takes the arguments last first

    try {
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kUsageError;
    }

    if (*recordCommand) {
        record.command = recordCommand->remaining();
        // Without --, the option parser passes an unknown option on as if it were the command.
        if (!record.command.empty() && record.command.front().starts_with("-")) {
            fprintf(stderr,
                "tuneup: record: unknown option '%s'; put the command after --, e.g. "
                "tuneup record -o run.db -- python train.py\n",
                record.command.front().c_str());
            return kUsageError;
        }
        record.command.insert(record.command.end(), afterDashes.begin(), afterDashes.end());
        return runRecord(record);
    }
    if (*adviseCommand) return runAdvise(advise);
    if (*rulesCommand) return runRules(userRules);
    if (*exportCommand) return runExport(exportOptions);
    if (*importCommand) return runImport(importOptions);
    return runInfo(info);
}
