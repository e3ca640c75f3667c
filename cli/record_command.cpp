#include "record_command.h"

#include "import/native_frame_names.h"
#include "import/tuneup_file.h"
#include "output_claim.h"
#include "run_files.h"
#include "subcommand.h"
#include "trace_items.h"
#include "units.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

extern char** environ;

namespace tuneup::cli {

namespace fs = std::filesystem;
using analysis::TuneupFile;
using analysis::TuneupFileError;

namespace {

constexpr const char* kAgentName = "libtuneup-agent.so";

// tuneup's own lines go to stderr only: the command's stdout stays as it would be without tuneup.
[[gnu::format(printf, 1, 2)]] void say(const char* format, ...) {
    va_list args;
    va_start(args, format);
    fputs("tuneup: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

int usageError(const std::string& message) {
    say("%s", message.c_str());
    return kUsageError;
}

std::string absolute(const std::string& path) {
    std::error_code ec;
    const fs::path result = fs::absolute(path, ec);
    return ec ? path : result.lexically_normal().string();
}

bool validTraceList(const std::string& list, std::string& normalized, std::string& error) {
    normalized.clear();
    size_t pos = 0;
    while (pos <= list.size()) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        std::string item = list.substr(pos, comma - pos);
        pos = comma + 1;
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (item.empty()) {
            error = "--trace '" + list + "' has an empty item; give a comma-separated list such as nvtx,cuda";
            return false;
        }
        if (!isTraceItem(item)) {
            error = "unknown --trace item '" + item + "' (known: " + traceItemNames() + ")";
            return false;
        }
        normalized += (normalized.empty() ? "" : ",") + item;
    }
    return true;
}

// "What to record, comma-separated: nvtx, torch (…), …, or none", from the one list of items.
std::string traceHelp() {
    std::string help = "What to record, comma-separated:";
    for (const TraceItem& item : kTraceItems) {
        help.append(item.name == "none" ? " or " : " ").append(item.name);
        if (!item.what.empty()) help.append(" (").append(item.what).append(")");
        if (item.name != "none") help += ",";
    }
    return help;
}

// Any item but nvtx, gemm, conv, noisy-api and none asks for CUPTI (trace is already validated and normalized).
bool requestsCuda(const std::string& trace) {
    size_t pos = 0;
    while (pos <= trace.size()) {
        const size_t comma = std::min(trace.find(',', pos), trace.size());
        const std::string item = trace.substr(pos, comma - pos);
        pos = comma + 1;
        if (item != "nvtx" && item != "gemm" && item != "conv" && item != "noisy-api" && item != "none") return true;
    }
    return false;
}

// Launchers start the real workers: they get TUNEUP_MAIN_PID=-1, so each rank writes run.rankN.db and
// the launcher itself is just another process (run.pidN.db).
bool isLauncher(const std::vector<std::string>& command) {
    const std::string program = fs::path(command[0]).filename().string();
    if (program == "torchrun" || program == "mpirun" || program == "mpiexec") return true;
    if (!program.starts_with("python")) return false;
    for (size_t i = 1; i < command.size(); ++i) {
        const std::string& arg = command[i];
        std::string module;
        if (arg == "-m" && i + 1 < command.size())
            module = command[i + 1];
        else if (arg.starts_with("-m") && arg.size() > 2)
            module = arg.substr(2);
        else if (arg.starts_with("-"))
            continue;
        else
            return false; // the script: python's own options end here
        return module == "torch.distributed.run" || module == "torch.distributed.launch";
    }
    return false;
}

bool readableFile(const std::string& path) {
    struct stat st { };
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), R_OK) == 0;
}

std::optional<std::string> findAgent(std::string& error) {
    if (const char* fromEnv = getenv("TUNEUP_AGENT"); fromEnv && *fromEnv) {
        std::error_code ec;
        if (const fs::path found = fs::canonical(fromEnv, ec); !ec && readableFile(found.string()))
            return found.string();
        error = std::string("the agent library was not found: TUNEUP_AGENT=") + fromEnv
            + " is not a readable file; point it at libtuneup-agent.so, or unset it to use the one installed "
              "beside tuneup";
        return std::nullopt;
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    std::vector<std::string> tried;
    for (const char* relative : { "../lib", "../lib/tuneup" }) {
        const fs::path candidate = (exe.parent_path() / relative / kAgentName).lexically_normal();
        std::error_code missing;
        if (const fs::path found = fs::canonical(candidate, missing); !ec && !missing && readableFile(found.string()))
            return found.string();
        tried.push_back(candidate.string());
    }
    error = std::string("the agent library ") + kAgentName + " was not found; looked at " + tried[0] + " and "
        + tried[1] + ". Build it (cmake --build build/dev --target tuneup-agent), reinstall tuneup, or set "
        + "TUNEUP_AGENT to its path";
    return std::nullopt;
}

// Creating a file is the only sure test: access(W_OK) says yes to root on read-only mounts and /proc.
bool canCreateIn(const std::string& directory, std::string& why) {
    const std::string probe = directory + "/.tuneup-write-test." + std::to_string(getpid());
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        why = strerror(errno);
        return false;
    }
    ::close(fd);
    unlink(probe.c_str());
    return true;
}

// Refuses to delete, even with --force, a file that is plainly someone else's data.
bool isForeignData(const std::string& path) {
    try {
        TuneupFile::open(path);
        return false;
    } catch (const TuneupFileError& e) {
        return e.kind() == TuneupFileError::Kind::Foreign || e.kind() == TuneupFileError::Kind::NotSqlite;
    }
}

std::string joinList(const std::vector<std::string>& items, size_t shown = 8) {
    std::string text;
    for (size_t i = 0; i < items.size() && i < shown; ++i)
        text += (i ? ", " : "") + items[i];
    if (items.size() > shown) text += ", and " + std::to_string(items.size() - shown) + " more";
    return text;
}

// ---- running the command ----

volatile sig_atomic_t g_child = 0;

void onSignal(int sig, siginfo_t* info, void*) {
    // A signal someone sent to tuneup with kill() (a scheduler, Python's send_signal, `kill PID`) is
    // meant for the command: pass it on. One the terminal sent (Ctrl-C, Ctrl-\, a hangup: si_code
    // SI_KERNEL) went to the whole foreground process group, the command included: passing it on would
    // deliver it twice (a second KeyboardInterrupt inside the first one's `finally`).
    const pid_t child = g_child;
    if (child > 0 && info && (info->si_code == SI_USER || info->si_code == SI_QUEUE || info->si_code == SI_TKILL)
        && info->si_pid != child)
        kill(child, sig);
}

constexpr int kHandled[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };

struct SavedSignals {
    struct sigaction actions[std::size(kHandled)] {};
    sigset_t mask {};
};

void restoreSignals(const SavedSignals& saved) {
    for (size_t i = 0; i < std::size(kHandled); ++i)
        sigaction(kHandled[i], &saved.actions[i], nullptr);
    sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
}

// Writes a decimal number into `out` without allocating (we are between fork and exec).
void writeDecimal(char* out, long value) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = char('0' + value % 10);
        value /= 10;
    } while (value > 0);
    while (n > 0)
        *out++ = digits[--n];
    *out = '\0';
}

// Whether NAME is a path to a file, or a file in some PATH directory.
bool onPath(const std::string& name) {
    if (name.find('/') != std::string::npos) return access(name.c_str(), F_OK) == 0;
    const char* path = getenv("PATH");
    std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    while (true) {
        const size_t colon = dirs.find(':');
        std::string dir(dirs.substr(0, colon));
        if (access(((dir.empty() ? "." : dir) + "/" + name).c_str(), F_OK) == 0) return true;
        if (colon == std::string_view::npos) return false;
        dirs.remove_prefix(colon + 1);
    }
}

struct ChildResult {
    int exitCode = 0;
    bool started = false; // false: exec failed, nothing ran
    bool exited = false; // it exited (a signal did not end it)
};

ChildResult runChild(
    const std::vector<std::string>& command, const std::vector<std::string>& environment, bool setMainPid) {
    std::vector<char*> argv;
    for (const std::string& arg : command)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& entry : environment)
        envp.push_back(const_cast<char*>(entry.c_str()));
    // The child writes its pid in; a launcher gets -<its pid>: no process of its run takes run.db.
    char mainPidEntry[64] = "TUNEUP_MAIN_PID=-1";
    envp.push_back(mainPidEntry);
    envp.push_back(nullptr);

    int execPipe[2];
    if (pipe2(execPipe, O_CLOEXEC) != 0) {
        say("cannot start the command: pipe: %s", strerror(errno));
        return { kUsageError, false };
    }

    // Block the handled signals across fork so the child starts with the dispositions tuneup was given.
    SavedSignals saved;
    sigset_t block;
    sigemptyset(&block);
    for (int sig : kHandled)
        sigaddset(&block, sig);
    sigprocmask(SIG_BLOCK, &block, &saved.mask);
    for (size_t i = 0; i < std::size(kHandled); ++i) {
        struct sigaction action { };
        action.sa_sigaction = onSignal;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(kHandled[i], &action, &saved.actions[i]);
    }

    const pid_t launcher = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int forkErrno = errno;
        restoreSignals(saved);
        close(execPipe[0]);
        close(execPipe[1]);
        say("cannot start the command: fork: %s", strerror(forkErrno));
        return { kUsageError, false };
    }
    if (pid == 0) {
        // The child: only async-signal-safe calls from here to exec.
        restoreSignals(saved);
        close(execPipe[0]);
        // If tuneup is killed (SIGKILL, which it cannot pass on), the command is told to stop as a
        // `kill` would, rather than run on unwatched; it may still finish its file (the agent flushes on
        // SIGTERM). Too late already if tuneup died before this line.
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != launcher) _exit(128 + SIGTERM);
        // A launcher's ranks write run.rankN.db; it says which process is the launcher with -<its pid>.
        if (setMainPid)
            writeDecimal(mainPidEntry + strlen("TUNEUP_MAIN_PID="), long(getpid()));
        else
            writeDecimal(mainPidEntry + strlen("TUNEUP_MAIN_PID=-"), long(getpid()));
        execvpe(argv[0], argv.data(), envp.data());
        const int execErrno = errno;
        [[maybe_unused]] ssize_t ignored = write(execPipe[1], &execErrno, sizeof execErrno);
        _exit(127);
    }

    g_child = pid;
    sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
    close(execPipe[1]);
    int execErrno = 0;
    ssize_t got;
    while ((got = read(execPipe[0], &execErrno, sizeof execErrno)) < 0 && errno == EINTR) { }
    close(execPipe[0]);

    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    g_child = 0;
    restoreSignals(saved);

    if (got == sizeof execErrno) {
        // execvp reports EACCES when any PATH directory was unreadable, even if no such program exists.
        if (execErrno == EACCES && !onPath(command[0])) execErrno = ENOENT;
        if (execErrno == ENOENT)
            say("cannot run '%s': command not found (not a file, nor a program on PATH)", command[0].c_str());
        else
            say("cannot run '%s': %s", command[0].c_str(), strerror(execErrno));
        return { execErrno == ENOENT ? 127 : 126, false };
    }
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char* name = sigabbrev_np(sig);
        say("the command was ended by signal %d (%s%s); exit code %d", sig, name ? "SIG" : "", name ? name : "?",
            128 + sig);
        return { 128 + sig, true };
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (code != 0) say("the command exited with code %d", code);
    return { code, true, WIFEXITED(status) };
}

std::vector<std::string> childEnvironment(
    const std::string& agent, const std::string& output, const std::string& trace) {
    static const std::string kOwned[] = { "LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH",
        "TUNEUP_OUTPUT", "TUNEUP_TRACE", "TUNEUP_MAIN_PID", "PYTHONPATH" };
    std::vector<std::string> environment;
    std::string preload, pythonPath;
    for (char** entry = environ; *entry; ++entry) {
        const std::string_view text(*entry);
        const std::string name(text.substr(0, text.find('=')));
        const std::string value(text.substr(std::min(text.size(), name.size() + 1)));
        if (std::find(std::begin(kOwned), std::end(kOwned), name) == std::end(kOwned)) {
            environment.emplace_back(text);
            continue;
        }
        if (name == "LD_PRELOAD")
            preload = value;
        else if (name == "PYTHONPATH")
            pythonPath = value;
        else if ((name == "CUDA_INJECTION64_PATH" || name == "NVTX_INJECTION64_PATH") && !value.empty()
            && value != agent)
            say("note: replacing %s=%s (one injection library at a time)", name.c_str(), value.c_str());
    }
    environment.push_back("LD_PRELOAD=" + agent + (preload.empty() ? "" : ":" + preload));
    environment.push_back("CUDA_INJECTION64_PATH=" + agent);
    environment.push_back("NVTX_INJECTION64_PATH=" + agent);
    environment.push_back("TUNEUP_OUTPUT=" + output);
    environment.push_back("TUNEUP_TRACE=" + trace);
    // The Python bootstrap (a sitecustomize beside the agent, which chains any other): first on the
    // path of every Python the command starts, unless TUNEUP_PYTHON_BOOTSTRAP=0.
    const std::string bootstrap = agent.substr(0, agent.rfind('/') + 1) + "python";
    const char* bootstrapSetting = getenv("TUNEUP_PYTHON_BOOTSTRAP");
    const bool withBootstrap = !(bootstrapSetting && strcmp(bootstrapSetting, "0") == 0)
        && access((bootstrap + "/sitecustomize.py").c_str(), R_OK) == 0;
    if (withBootstrap)
        environment.push_back("PYTHONPATH=" + bootstrap + (pythonPath.empty() ? "" : ":" + pythonPath));
    else if (!pythonPath.empty())
        environment.push_back("PYTHONPATH=" + pythonPath);
    return environment;
}

// Why a file has no end record. A full disk is told from a process that was killed; the agent keeps
// space for the end record, so a full disk shows here only when even that did not fit.
std::string whyIncomplete(const std::string& path, bool mainFile, const ChildResult& command) {
    const std::string directory = fs::path(path).parent_path().string();
    struct statvfs disk { };
    if (statvfs(directory.c_str(), &disk) == 0) {
        const uint64_t available = uint64_t(disk.f_bavail) * disk.f_frsize;
        if (available < (uint64_t(1) << 20))
            return "the disk is full (" + formatBytes(int64_t(available)) + " free in " + directory
                + "): it holds what was written before";
    }
    if (mainFile && command.exited)
        return "the command exited but its file was not finished (the agent's messages above say why)";
    return "the process did not exit cleanly";
}

void reportFiles(const std::string& output, bool launcher, bool cudaRequested, const ChildResult& command) {
    const RecordingFiles files = findRecordingFiles(output);
    if (files.traces.empty()) {
        std::string why;
        if (const char* disabled = getenv("TUNEUP_DISABLE"); disabled && *disabled && strcmp(disabled, "0") != 0)
            why = "TUNEUP_DISABLE is set";
        else if (launcher)
            why = "no process recorded anything: ranks create their files on their first event";
        else
            why = "the command ended before the agent wrote its file, or the agent did not load: statically "
                  "linked and setuid programs ignore LD_PRELOAD; TUNEUP_LOG=debug shows what the agent does";
        say("no trace file was written (%s)", why.c_str());
        return;
    }
    bool notedCapture = false, notedNative = false;
    for (const std::string& path : files.traces) {
        try {
            // While the binaries that ran are still there.
            const analysis::NativeFrameNaming named = analysis::nameNativeFrames(path);
            const auto file = TuneupFile::open(path);
            const analysis::TuneupFileSummary summary = file->summary();
            const std::optional<int64_t> duration = summary.durationNs();
            std::string line = "recorded " + formatCount(summary.eventCount()) + " events ("
                + formatCount(summary.droppedCount()) + " dropped)";
            if (duration) line += " in " + formatElapsed(*duration);
            line += " -> " + path + " (" + formatBytes(int64_t(summary.fileBytes + summary.walBytes)) + ")";
            if (!summary.complete)
                line += "; incomplete: " + whyIncomplete(path, path == files.mainPath && !launcher, command);
            say("%s", line.c_str());
            if (const std::string stopped = summary.metaValue("capture.stopped"); !stopped.empty())
                say("  recording stopped early: %s; what came after is counted as dropped", stopped.c_str());
            for (const std::string& warning : summary.warnings)
                say("  %s", warning.c_str());
            // Native stacks that a native program could not have (perf refused, no libunwind): once.
            const std::string native = summary.metaValue("capture.native_stacks");
            if (!notedNative && native.starts_with("off: ") && native.find("Python program") == std::string::npos
                && native.find("system program") == std::string::npos) {
                say("  native stacks %s", native.c_str());
                notedNative = true;
            }
            if (named.frames > 0)
                say("  native stacks: %zu of %zu sampled places in the program's code named from its debug "
                    "information%s",
                    named.named, named.frames, named.problem.empty() ? "" : ("; the others: " + named.problem).c_str());
            // GPU capture that was asked for and did not happen is the first thing to know (once is enough:
            // the ranks share the cause). NVTX is left out: most programs never call it.
            const std::string cuda = summary.metaValue("capture.cuda");
            if (!notedCapture && cudaRequested && cuda.starts_with("off")) {
                say("  GPU capture %s", cuda.c_str());
                notedCapture = true;
            }
        } catch (const TuneupFileError& e) {
            say("%s", e.what());
        }
    }
}

} // namespace

RecordingFiles findRecordingFiles(const std::string& output) {
    RecordingFiles files;
    const std::string stem = runStem(absolute(output));
    files.mainPath = stem + ".db";
    for (const RunFileName& file : listRunFiles(stem))
        files.traces.push_back(file.path());
    files.sidecars = listRunSidecars(stem);
    return files;
}

int runRecord(const RecordOptions& options) {
    if (options.command.empty())
        return usageError("record: no command to record; give it after --, e.g. "
                          "tuneup record -o run.db -- python train.py");
    std::string trace, error;
    if (!validTraceList(options.trace, trace, error)) return usageError("record: " + error);

    // The output: a writable directory, and no earlier recording in the way unless --force.
    const std::string output = absolute(options.output);
    const RecordingFiles existing = findRecordingFiles(output);
    const std::string directory = fs::path(existing.mainPath).parent_path().string();
    struct stat st { };
    if (stat(directory.c_str(), &st) != 0)
        return usageError("record: the output directory " + directory + " does not exist; create it (mkdir -p "
            + directory + ") or choose another -o");
    if (!S_ISDIR(st.st_mode)) return usageError("record: " + directory + " is not a directory; choose another -o");
    if (fs::is_directory(existing.mainPath))
        return usageError("record: -o " + existing.mainPath + " is a directory; name a file, e.g. -o "
            + (fs::path(existing.mainPath) / "run.db").string());
    std::string why;
    if (!canCreateIn(directory, why))
        return usageError(
            "record: cannot write in the output directory " + directory + " (" + why + "); choose another -o");
    // Before anything is deleted or listed as ours: another recording to the same output owns its files.
    std::string claimError;
    const std::unique_ptr<OutputClaim> claim = OutputClaim::claim(existing.mainPath, claimError);
    if (!claim) return usageError("record: " + claimError);
    for (const std::string& path : existing.traces)
        if (isForeignData(path))
            return usageError("record: " + path + " exists and is not a tuneup trace, so tuneup will not replace "
                + "it, even with --force; move it away or choose another -o");
    if (!options.force && (!existing.traces.empty() || !existing.sidecars.empty())) {
        const std::vector<std::string>& names = existing.traces.empty() ? existing.sidecars : existing.traces;
        return usageError("record: the output exists: " + joinList(names)
            + "; add --force to replace it (the old files are deleted), or choose another -o");
    }

    std::string agentError;
    const std::optional<std::string> agent = findAgent(agentError);
    if (!agent) return usageError("record: " + agentError);
    // LD_PRELOAD separates libraries with spaces and colons.
    if (agent->find_first_of(" :") != std::string::npos)
        return usageError("record: the agent's path " + *agent
            + " contains a space or ':', which LD_PRELOAD cannot carry; install tuneup in another directory");

    if (options.force) {
        std::vector<std::string> doomed = existing.traces;
        doomed.insert(doomed.end(), existing.sidecars.begin(), existing.sidecars.end());
        for (const std::string& path : doomed)
            if (unlink(path.c_str()) != 0 && errno != ENOENT)
                return usageError("record: cannot delete " + path + " (" + strerror(errno) + ")");
    }

    const bool launcher = isLauncher(options.command);
    const ChildResult result = runChild(options.command, childEnvironment(*agent, output, trace), !launcher);
    if (result.started) reportFiles(output, launcher, requestsCuda(trace), result);
    return result.exitCode;
}

} // namespace tuneup::cli

namespace tuneup::cli {

namespace {

// record's usage line names the command it runs, which CLI11 cannot know.
class RecordFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App*, std::string name) const override {
        return "Usage: " + name + " [OPTIONS] [--] CMD ARGS...\n";
    }
};

} // namespace

std::function<int()> addRecordCommand(CLI::App& app, const std::vector<std::string>& afterDashes) {
    auto options = std::make_shared<RecordOptions>();
    CLI::App* record = app.add_subcommand(
        "record", "Run CMD ARGS... with the recording agent injected (no code change) and write a trace per process.");
    record->formatter(std::make_shared<RecordFormatter>());
    record
        ->add_option("-o,--output", options->output,
            "Trace file of the command; rank N writes FILE.rankN.db beside it, other processes FILE.pidN.db")
        ->capture_default_str();
    record->add_flag("-f,--force", options->force, "Replace an existing recording (its files are deleted)");
    record->add_option("--trace", options->trace, traceHelp())->capture_default_str();
    // Everything from the first positional on (or after --) is the command, its own options included.
    record->prefix_command();
    record->footer("Examples:\n"
                   "  tuneup record -o run.db -- python train.py --epochs 1\n"
                   "  tuneup record -o run.db -- torchrun --nproc-per-node 8 train.py   # run.rank0.db ... "
                   "run.rank7.db\n"
                   "  tuneup record --trace nvtx,kernel --force -- ./train_app\n\n"
        + std::string(kExitCodes));
    return [options, record, afterDashes] {
        options->command = record->remaining();
        // Without --, the option parser passes an unknown option on as if it were the command.
        if (!options->command.empty() && options->command.front().starts_with("-")) {
            fprintf(stderr,
                "tuneup: record: unknown option '%s'; put the command after --, e.g. "
                "tuneup record -o run.db -- python train.py\n",
                options->command.front().c_str());
            return kUsageError;
        }
        options->command.insert(options->command.end(), afterDashes.begin(), afterDashes.end());
        return runRecord(*options);
    };
}

} // namespace tuneup::cli
