#include "metadata.h"

#include "clock.h"
#include "log.h"
#include "output_path.h"
#include "trace_db.h"
#include "trace_schema.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sys/utsname.h>
#include <unistd.h>

namespace tuneup::agent {

std::string commandLine() {
    std::string line;
    if (FILE* f = fopen("/proc/self/cmdline", "re")) {
        char buffer[4096];
        size_t n;
        while ((n = fread(buffer, 1, sizeof buffer, f)) > 0)
            line.append(buffer, n);
        fclose(f);
    }
    while (!line.empty() && line.back() == '\0')
        line.pop_back();
    for (char& c : line)
        if (c == '\0') c = ' ';
    return line;
}

namespace {

// A rank or size from the environment: a plain number, else said once and not stored (a reader must
// never be handed "abc" where it expects a number).
void setNumberFromEnvironment(TraceDb& db, const char* variable, const char* key) {
    const char* value = getenv(variable);
    if (!value) return;
    char* end = nullptr;
    errno = 0;
    const long number = strtol(value, &end, 10);
    if (*value && *end == '\0' && errno == 0 && number >= 0 && number < (1L << 24)) {
        db.setMeta(key, std::to_string(number));
        return;
    }
    TUNEUP_LOG(Warn, "%s=%s is not a number; %s is not recorded", variable, value, key);
}

} // namespace

void writeMetadata(TraceDb& db, const ProcessFacts& facts, bool reopened) {
    const int pid = int(getpid());
    const std::string command = commandLine();
    if (reopened) {
        // The same process after exec(): a new program image, the same file.
        db.setMeta("command_line", command);
        db.setMeta("exec_count", std::to_string(std::atoi(db.metaValue("exec_count").c_str()) + 1));
        db.removeMeta("end_ns"); // the image before wrote its end; this one has not ended
        db.removeMeta("capture.stopped");
        db.addProcess(
            pid, int(getppid()), facts.role, command, std::strtoull(db.metaValue("start_ns").c_str(), nullptr, 10));
        return;
    }
    db.setMeta("format", schema::kFormatName);
    db.setMeta("schema_version", std::to_string(schema::kSchemaVersion));
    db.setMeta("tuneup_version", TUNEUP_VERSION);
    db.setMeta("pid", std::to_string(pid));
    db.setMeta("parent_pid", std::to_string(getppid()));
    db.setMeta("role", facts.role);
    db.setMeta("command_line", command);
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) db.setMeta("host", host);
    // System call numbers in thread_states depend on the architecture.
    if (utsname names {}; uname(&names) == 0) db.setMeta("machine", names.machine);
    if (auto rank = rankFromEnvironment())
        db.setMeta("rank", std::to_string(*rank));
    else if (const char* text = getenv("RANK"))
        TUNEUP_LOG(Warn, "RANK=%s is not a number; the file is not named or marked by rank", text);
    setNumberFromEnvironment(db, "LOCAL_RANK", "local_rank");
    setNumberFromEnvironment(db, "WORLD_SIZE", "world_size");
    setNumberFromEnvironment(db, "LOCAL_WORLD_SIZE", "local_world_size");
    if (const char* value = getenv("CUDA_VISIBLE_DEVICES"))
        db.setMeta("cuda_visible_devices", value); // text: ids or UUIDs
    db.setMeta("start_ns", std::to_string(facts.startNs));
    // One pair read back to back, to turn monotonic times into wall-clock times.
    const uint64_t realtime = realtimeNs();
    const uint64_t monotonic = nowNs();
    db.setMeta("clock", "CLOCK_MONOTONIC");
    db.setMeta("clock.realtime_ns", std::to_string(realtime));
    db.setMeta("clock.monotonic_ns", std::to_string(monotonic));
    db.setMeta("capture.nvtx", "off: no library called NVTX with NVTX_INJECTION64_PATH pointing at the agent");
#ifdef TUNEUP_HAVE_CUPTI
    db.setMeta("capture.cuda",
        "off: the process did not initialise CUDA (no cuInit), so CUDA_INJECTION64_PATH "
        "never called the agent");
#else
    db.setMeta("capture.cuda", "off: this tuneup was built without CUPTI headers");
#endif
    db.addProcess(pid, int(getppid()), facts.role, command, facts.startNs);
}

} // namespace tuneup::agent
