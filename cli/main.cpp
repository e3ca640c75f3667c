// The `tuneup` command: record a run, say what a trace holds, advise on it. Each subcommand lives in its
// own file and is listed in subcommands.cpp.

#include "output_file.h"
#include "subcommand.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace {

// The analysis grows its columns by doubling them. glibc maps each block over 128 KiB afresh (the threshold adapts
// up to 32 MiB) and gives freed memory back early, so each doubling faulted its pages in again: a quarter of
// advising a 35 MB Kineto trace went to page faults. Blocks under 4 MiB now come from the heap, which keeps up to
// 64 MiB of freed memory for reuse: 7-11% faster there. Larger blocks are still mapped and unmapped whole, so a
// gigabyte trace's peak does not grow (docs/performance.md). Only this process: `tuneup record`'s command starts
// with glibc's defaults.
void keepFreedMemoryForReuse() {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

} // namespace

int main(int argc, char** argv) {
    using namespace tuneup::cli;
    keepFreedMemoryForReuse();

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

    if (argc < 2) {
        fprintf(stderr, "%s", app.help().c_str());
        return kUsageError;
    }

    // "tuneup record ... -- CMD ARGS": everything after the first -- is the command, untouched by the
    // option parser.
    std::vector<std::string> args(argv + 1, argv + argc);
    std::vector<std::string> afterDashes;
    const auto named = std::find_if(args.begin(), args.end(), [](const std::string& a) { return !a.starts_with("-"); });
    const bool takesCommand = named != args.end()
        && std::any_of(subcommands().begin(), subcommands().end(),
            [&](const Subcommand& s) { return s.takesCommand && s.name == *named; });
    if (const auto dashes = std::find(named, args.end(), "--"); takesCommand && dashes != args.end()) {
        afterDashes.assign(dashes + 1, args.end());
        args.erase(dashes, args.end());
    }

    std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
    for (const Subcommand& s : subcommands()) {
        std::function<int()> run = s.add(app, afterDashes);
        runners.emplace_back(app.get_subcommand(std::string(s.name)), std::move(run));
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
    for (const auto& [subcommand, run] : runners)
        if (*subcommand) {
            const int code = run();
            // Output that did not arrive (a full disk, a closed pipe) fails a command that succeeded,
            // whatever wrote it; record returns its program's exit code, which is not ours to change.
            if (code != 0 || subcommand->get_name() == "record") return code;
            if (const std::string error = checkStdout(); !error.empty()) {
                fprintf(stderr, "tuneup %s: %s\n", subcommand->get_name().c_str(), error.c_str());
                return kUsageError;
            }
            return 0;
        }
    return kUsageError;
}
