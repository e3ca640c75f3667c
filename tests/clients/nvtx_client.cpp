// A small program that emits NVTX the way training code does, for the agent's injection tests.
//   nvtx_client ranges --threads N --ranges R [--depth D] [--unnamed]
//                                                           nested push/pop ranges from N threads
//                                                           (named worker-<i> unless --unnamed)
//   nvtx_client domains                                     domains, registered strings, categories,
//                                                           start/end across threads, marks, payloads
//   nvtx_client fork --children C --ranges R [--busy]       a parent that forks children emitting NVTX
//                                                           (--busy: a parent thread emits meanwhile,
//                                                           so the parent's writer is busy at each fork)
//   nvtx_client burst --threads N --ranges R --child-ranges C
//                                                           a burst as fast as it goes: N threads of R
//                                                           ranges each, and meanwhile a forked child's
//                                                           main thread making C ranges (every thread has
//                                                           made its first range before the fork)
//   nvtx_client forever [--ready FILE] [--progress FILE]    ranges until killed (signal tests); --progress
//                                                           appends "<k> <CLOCK_MONOTONIC ns>" just before
//                                                           range k starts, every 100 ranges
// It prints what it emitted as "emitted <ranges> <marks>" so tests can compare with the file.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

int option(int argc, char** argv, const char* name, int fallback) {
    for (int i = 2; i + 1 < argc; ++i)
        if (!strcmp(argv[i], name)) return atoi(argv[i + 1]);
    return fallback;
}

bool flag(int argc, char** argv, const char* name) {
    for (int i = 2; i < argc; ++i)
        if (!strcmp(argv[i], name)) return true;
    return false;
}

const char* textOption(int argc, char** argv, const char* name) {
    for (int i = 2; i + 1 < argc; ++i)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return nullptr;
}

void nested(int depth, int index) {
    char name[64];
    snprintf(name, sizeof name, "level%d/%d", depth, index);
    nvtxRangePushA(name);
    if (depth > 1) nested(depth - 1, index);
    nvtxRangePop();
}

int ranges(int argc, char** argv) {
    const int threads = option(argc, argv, "--threads", 1);
    const int count = option(argc, argv, "--ranges", 1000);
    const int depth = option(argc, argv, "--depth", 1);
    const bool unnamed = flag(argc, argv, "--unnamed");
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([=] {
            char name[32];
            snprintf(name, sizeof name, "worker-%d", t);
            if (!unnamed) nvtxNameOsThreadA(uint32_t(gettid()), name);
            for (int i = 0; i < count; ++i)
                nested(depth, i);
        });
    for (auto& w : workers)
        w.join();
    printf("emitted %lld 0\n", (long long)threads * count * depth);
    return 0;
}

int domains() {
    nvtxDomainHandle_t train = nvtxDomainCreateA("train");
    nvtxDomainHandle_t data = nvtxDomainCreateA("data");
    nvtxDomainHandle_t trainAgain = nvtxDomainCreateA("train");
    if (train != trainAgain) fprintf(stderr, "note: two handles for one domain name\n");
    nvtxStringHandle_t step = nvtxDomainRegisterStringA(train, "step");
    nvtxDomainNameCategoryA(train, 7, "optimizer");
    nvtxNameCategoryA(3, "default-category");

    for (int i = 0; i < 5; ++i) {
        nvtxEventAttributes_t a {};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = step;
        a.colorType = NVTX_COLOR_ARGB;
        a.color = 0xFF00FF00;
        a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
        a.payload.llValue = i;
        nvtxDomainRangePushEx(train, &a);

        nvtxEventAttributes_t b {};
        b.version = NVTX_VERSION;
        b.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        b.messageType = NVTX_MESSAGE_TYPE_ASCII;
        b.message.ascii = "zero_grad";
        b.category = 7;
        nvtxDomainRangePushEx(train, &b);
        nvtxDomainRangePop(train);
        nvtxDomainRangePop(train);
    }
    // A start/end range that begins on one thread and ends on another.
    nvtxEventAttributes_t c {};
    c.version = NVTX_VERSION;
    c.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    c.messageType = NVTX_MESSAGE_TYPE_ASCII;
    c.message.ascii = "batch";
    c.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    c.payload.dValue = 2.5;
    nvtxRangeId_t id = nvtxDomainRangeStartEx(data, &c);
    std::thread([id, data] { nvtxDomainRangeEnd(data, id); }).join();
    nvtxRangeId_t plain = nvtxRangeStartA("plain-start-end");
    nvtxRangeEnd(plain);

    nvtxMarkA("checkpoint");
    nvtxEventAttributes_t m {};
    m.version = NVTX_VERSION;
    m.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    m.messageType = NVTX_MESSAGE_TYPE_ASCII;
    m.message.ascii = "epoch";
    m.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
    m.payload.uiValue = 3;
    nvtxDomainMarkEx(data, &m);
    nvtxRangePushA("never-closed");
    printf("emitted 13 2\n");
    return 0;
}

int forkChildren(int argc, char** argv) {
    const int children = option(argc, argv, "--children", 2);
    const int count = option(argc, argv, "--ranges", 100);
    nvtxRangePushA("parent-before-fork");
    nvtxRangePop();
    std::atomic<bool> forking { true };
    std::atomic<long long> busyRanges { 0 };
    std::thread busy;
    if (flag(argc, argv, "--busy"))
        busy = std::thread([&] {
            while (forking.load()) {
                nvtxRangePushA("parent-busy");
                nvtxRangePop();
                busyRanges.fetch_add(1);
            }
        });
    std::vector<pid_t> pids;
    for (int c = 0; c < children; ++c) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < count; ++i) {
                nvtxRangePushA("child-range");
                nvtxRangePop();
            }
            // Like a Python DataLoader worker: _exit runs no atexit handlers.
            if (c % 2 == 0) exit(0);
            _exit(0);
        }
        pids.push_back(pid);
    }
    for (pid_t pid : pids)
        waitpid(pid, nullptr, 0);
    forking.store(false);
    if (busy.joinable()) busy.join();
    nvtxRangePushA("parent-after-fork");
    nvtxRangePop();
    printf("emitted %lld 0\n", 2 + busyRanges.load());
    return 0;
}

void burstRange(const char* who, int thread, int index) {
    char name[48];
    snprintf(name, sizeof name, "%s/%d/%d", who, thread, index);
    nvtxRangePushA(name);
    nvtxRangePop();
}

int burst(int argc, char** argv) {
    const int threads = option(argc, argv, "--threads", 4);
    const int count = option(argc, argv, "--ranges", 20000);
    const int childCount = option(argc, argv, "--child-ranges", 20000);
    std::atomic<int> ready { 0 };
    std::atomic<bool> go { false };
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            burstRange("burst", t, 0);
            ready.fetch_add(1);
            while (!go.load())
                std::this_thread::yield();
            for (int i = 1; i < count; ++i)
                burstRange("burst", t, i);
        });
    while (ready.load() < threads)
        std::this_thread::yield();
    const pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < childCount; ++i)
            burstRange("child", 0, i);
        exit(0);
    }
    go.store(true);
    for (auto& w : workers)
        w.join();
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "burst: the child failed\n");
        return 1;
    }
    printf("emitted %lld 0\n", (long long)threads * count);
    return 0;
}

int forever(int argc, char** argv) {
    const char* ready = textOption(argc, argv, "--ready");
    const char* progressPath = textOption(argc, argv, "--progress");
    const int progress = progressPath ? open(progressPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    long long emitted = 0;
    for (;;) {
        if (progress >= 0 && emitted % 100 == 0) {
            // One write per line: a kill between two writes never leaves half a line.
            timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            char line[64];
            const int n
                = snprintf(line, sizeof line, "%lld %lld\n", emitted, (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec);
            if (write(progress, line, size_t(n)) != n) return 1;
        }
        nvtxRangePushA("tick");
        nvtxRangePop();
        if (++emitted == 1000 && ready) fclose(fopen(ready, "w"));
        usleep(100);
    }
}

} // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "ranges") return ranges(argc, argv);
    if (mode == "domains") return domains();
    if (mode == "fork") return forkChildren(argc, argv);
    if (mode == "burst") return burst(argc, argv);
    if (mode == "forever") return forever(argc, argv);
    fprintf(stderr, "usage: nvtx_client ranges|domains|fork|burst|forever [options]\n");
    return 2;
}
