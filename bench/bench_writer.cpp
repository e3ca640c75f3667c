// Sustained throughput of the agent's recording pipeline: producer threads emit NVTX events into
// their rings as fast as they can (never blocking), the writer thread drains them into SQLite.
//   bench_writer [--events N] [--producers P] [--kind ranges|marks] [--out FILE]
// Prints events/s and rows/s written, drops, and the file size. See docs/performance.md.

#include "clock.h"
#include "host_events.h"
#include "ring_registry.h"
#include "writer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tuneup::agent;

int main(int argc, char** argv)
{
    long long events = 4'000'000;
    int producers = 1;
    bool marks = false;
    std::string out = "/tmp/tuneup-bench-writer.db";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--events"))
            events = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--producers"))
            producers = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kind"))
            marks = !strcmp(argv[i + 1], "marks");
        else if (!strcmp(argv[i], "--out"))
            out = argv[i + 1];
        else {
            fprintf(stderr, "usage: bench_writer [--events N] [--producers P] [--kind ranges|marks] [--out FILE]\n");
            return 2;
        }
    }
    for (const char* suffix : { "", "-wal", "-shm" })
        unlink((out + suffix).c_str());

    RingRegistry::configure(8u << 20, 64u << 20);
    Writer::start(out, true, nullptr);
    const uint64_t start = nowNs();
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&] {
            NvtxEventFixed event {};
            event.messageKind = MessageKind::Text;
            const NvtxScopeFixed scope {};
            for (long long i = 0; i < events / producers; i += marks ? 1 : 2) {
                if (marks) {
                    RingRegistry::emit(HostEventKind::NvtxMark, nowNs(), &event, sizeof event, "checkpoint");
                } else {
                    RingRegistry::emit(HostEventKind::NvtxPush, nowNs(), &event, sizeof event, "forward");
                    RingRegistry::emit(HostEventKind::NvtxPop, nowNs(), &scope, sizeof scope, {});
                }
                // Yield now and then, like a training thread doing other work between ranges.
                if ((i & 0xffff) == 0)
                    std::this_thread::yield();
            }
        });
    for (auto& t : threads)
        t.join();
    const uint64_t produced = nowNs();
    Writer::stop();
    const uint64_t end = nowNs();

    const RingTotals totals = RingRegistry::totals();
    const uint64_t written = totals.produced - totals.dropped;
    struct stat st {};
    stat(out.c_str(), &st);
    const double seconds = double(end - start) / 1e9;
    printf("producers: %d, kind: %s\n", producers, marks ? "marks" : "ranges (push+pop = 2 events, 1 row)");
    printf("produced %llu events in %.3f s (%.2f M/s); dropped %llu\n", (unsigned long long)totals.produced,
        double(produced - start) / 1e9, double(totals.produced) / (double(produced - start) / 1e3),
        (unsigned long long)totals.dropped);
    printf("written  %llu events in %.3f s until the file was closed: %.2f M events/s, %.2f M rows/s\n",
        (unsigned long long)written, seconds, double(written) / seconds / 1e6,
        double(marks ? written : written / 2) / seconds / 1e6);
    printf("file %s: %.1f MB\n", out.c_str(), double(st.st_size) / 1e6);
    return 0;
}
