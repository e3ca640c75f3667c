// Sustained throughput of the agent's writer: how many events per second it turns from a thread's
// ring into SQLite rows (HostEventSink + TraceDb with the agent's pragmas, committing every 200 ms
// as the writer thread does). Producers never wait for it: this is the rate at which it keeps up.
//   bench_writer [--events N] [--kind ranges|marks] [--out FILE]

#include "clock.h"
#include "host_event_sink.h"
#include "thread_ring.h"
#include "trace_db.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace tuneup::agent;

int main(int argc, char** argv) {
    long long events = 4'000'000;
    bool marks = false;
    std::string out = "/tmp/tuneup-bench-writer.db";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--events"))
            events = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--kind"))
            marks = !strcmp(argv[i + 1], "marks");
        else if (!strcmp(argv[i], "--out"))
            out = argv[i + 1];
        else {
            fprintf(stderr, "usage: bench_writer [--events N] [--kind ranges|marks] [--out FILE]\n");
            return 2;
        }
    }
    for (const char* suffix : { "", "-wal", "-shm" })
        unlink((out + suffix).c_str());

    std::string error;
    auto db = TraceDb::create(out, error);
    if (!db) {
        fprintf(stderr, "bench_writer: %s\n", error.c_str());
        return 1;
    }
    HostEventSink sink(*db, int(getpid()));
    ThreadRing ring(int(getpid()), 1 << 20, 1 << 20);
    const char* names[] = { "forward", "backward", "optimizer.step", "zero_grad" };
    NvtxEventFixed event {};
    event.messageKind = MessageKind::Text;
    const NvtxScopeFixed scope {};

    const uint64_t start = nowNs();
    uint64_t lastCommit = start, produced = 0;
    db->begin();
    while (produced < uint64_t(events)) {
        // One batch as a busy thread would leave it between two writer passes.
        for (int i = 0; i < 4096; i += 2) {
            const char* name = names[(produced >> 1) & 3];
            if (marks) {
                ring.write(EventSource::Nvtx, HostEventKind::NvtxMark, nowNs(), &event, sizeof event, name);
                ring.write(EventSource::Nvtx, HostEventKind::NvtxMark, nowNs(), &event, sizeof event, name);
            } else {
                ring.write(EventSource::Nvtx, HostEventKind::NvtxPush, nowNs(), &event, sizeof event, name);
                ring.write(EventSource::Nvtx, HostEventKind::NvtxPop, nowNs(), &scope, sizeof scope, {});
            }
            produced += 2;
        }
        ring.drain([&](const RecordHeader& header, const std::byte* body) { sink.consume(1, header, body); });
        if (nowNs() - lastCommit > 200'000'000) {
            db->commit();
            db->begin();
            lastCommit = nowNs();
        }
    }
    db->commit();
    db.reset(); // closing checkpoints the WAL into the file: part of the cost
    const double seconds = double(nowNs() - start) / 1e9;
    struct stat st { };
    stat(out.c_str(), &st);
    printf("%s: %llu events (%llu dropped) in %.3f s: %.2f M events/s, %.2f M rows/s; file %.1f MB\n",
        marks ? "marks" : "ranges (push+pop = 2 events, 1 row)", (unsigned long long)sink.consumed(),
        (unsigned long long)ring.dropped(), seconds, double(sink.consumed()) / seconds / 1e6,
        double(marks ? sink.consumed() : sink.consumed() / 2) / seconds / 1e6, double(st.st_size) / 1e6);
    return 0;
}
