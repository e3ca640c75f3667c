#include "native_stack_sampler.h"

#include "clock.h"
#include "module_unload_lock.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#if __has_include(<libunwind.h>) && defined(__x86_64__)
#define TUNEUP_NATIVE_STACKS 1
#include <libunwind.h>
#endif

namespace tuneup::agent {

namespace {

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

std::string executablePath() {
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    return n > 0 ? std::string(path, size_t(n)) : std::string();
}

} // namespace

bool isUserCodeModule(std::string_view path) {
    if (path.empty() || path.front() != '/') return false; // [vdso], anonymous code (a JIT's)
    for (std::string_view system : { "/usr/lib/", "/usr/lib64/", "/usr/libexec/", "/lib/", "/lib64/", "/usr/bin/",
             "/bin/", "/usr/sbin/", "/sbin/", "/usr/local/cuda", "/opt/nvidia/", "/opt/conda/lib/" })
        if (startsWith(path, system)) return false;
    for (std::string_view installed : { "/site-packages/", "/dist-packages/", "/torch/lib/", "/nvidia/" })
        if (path.find(installed) != std::string_view::npos) return false;
    const std::string_view file = path.substr(path.rfind('/') + 1);
    for (std::string_view library :
        { "libtorch", "libc10", "libcaffe2", "libcuda", "libcublas", "libcudnn", "libcufft", "libcurand", "libcusparse",
            "libcusolver", "libnccl", "libnvrtc", "libnvJitLink", "libnvToolsExt", "libnvtx", "libcupti", "libgomp",
            "libiomp", "libmkl", "libtbb", "libopenblas", "libtuneup", "libpython", "python" })
        if (startsWith(file, library)) return false;
    return true;
}

#ifdef TUNEUP_NATIVE_STACKS

namespace {

constexpr size_t kPageBytes = 4096;
constexpr size_t kRingPages = 128; // 512 KiB: about 16 samples of 32 KiB stacks between two drains
constexpr uint32_t kStackBytes = 32 * 1024; // enough for the frames between a library's leaf and the user's code
constexpr int kMaxFrames = 128;
// The registers asked for, in the order perf writes them: AX BX CX DX SI DI BP SP IP (bits 0-8), R8-R15 (16-23).
constexpr uint64_t kRegisterMask = 0x1ffull | (0xffull << 16);
constexpr int kRegisterCount = 17;
constexpr int kPerfSp = 7;
// libunwind's x86-64 numbering (RAX RDX RCX RBX RSI RDI RBP RSP R8-R15 RIP) to perf's order above.
constexpr std::array<int, 17> kUnwindToPerf { 0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8 };

// The loaded modules and their segments, from dl_iterate_phdr: which module holds an address (dladdr would search
// the symbols of LibTorch's libraries, hundreds of thousands, at each frame), and which memory the unwinder may read
// in place: the modules' readable segments, where their unwind tables are, and nothing else of the live process (a
// frame address gone wrong could otherwise point anywhere).
struct LoadedModules {
    struct Module {
        std::string path;
        bool user = false;
        uintptr_t base = 0; // the load bias: an address less it is the ELF virtual address
    };
    struct Segment {
        uintptr_t start = 0, end = 0;
        size_t module = 0;
        bool readable = false;
    };
    std::vector<Module> modules;
    std::vector<Segment> segments; // by start
    // dl_iterate_phdr's counts of loads and unloads when read: a library unloaded since must not be read in place.
    std::pair<unsigned long long, unsigned long long> changes { ~0ull, ~0ull };
    std::string executable = executablePath();

    void refresh() {
        modules.clear();
        segments.clear();
        dl_iterate_phdr(
            [](dl_phdr_info* info, size_t, void* self) {
                auto& m = *static_cast<LoadedModules*>(self);
                m.changes = { info->dlpi_adds, info->dlpi_subs };
                // The program itself comes first, without a name.
                const std::string path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name
                    : m.modules.empty()                                        ? m.executable
                                                                               : std::string();
                m.modules.push_back({ path, isUserCodeModule(path), info->dlpi_addr });
                for (int i = 0; i < info->dlpi_phnum; ++i) {
                    const ElfW(Phdr)& p = info->dlpi_phdr[i];
                    if (p.p_type == PT_LOAD)
                        m.segments.push_back({ info->dlpi_addr + p.p_vaddr, info->dlpi_addr + p.p_vaddr + p.p_memsz,
                            m.modules.size() - 1, (p.p_flags & PF_R) != 0 });
                }
                return 0;
            },
            this);
        std::sort(
            segments.begin(), segments.end(), [](const Segment& a, const Segment& b) { return a.start < b.start; });
    }
    // The loader's counts of loads and unloads so far (read from the first module only).
    static std::pair<unsigned long long, unsigned long long> loadCounts() {
        std::pair<unsigned long long, unsigned long long> now;
        dl_iterate_phdr(
            [](dl_phdr_info* info, size_t, void* counts) {
                *static_cast<std::pair<unsigned long long, unsigned long long>*>(counts)
                    = { info->dlpi_adds, info->dlpi_subs };
                return 1;
            },
            &now);
        return now;
    }
    // Read again when libraries were loaded or unloaded since.
    void refreshIfChanged() {
        if (loadCounts() != changes) refresh();
    }
    const Segment* find(uintptr_t address) const {
        auto it = std::upper_bound(segments.begin(), segments.end(), address,
            [](uintptr_t a, const Segment& segment) { return a < segment.start; });
        return it != segments.begin() && address < std::prev(it)->end ? &*std::prev(it) : nullptr;
    }
    bool readable(uintptr_t address, size_t bytes) const {
        const Segment* segment = find(address);
        return segment && segment->readable && address + bytes <= segment->end;
    }
};

// One sample, as the unwinder's accessors read it.
struct Snapshot {
    std::array<uint64_t, kRegisterCount> registers {};
    const std::byte* stack = nullptr;
    uint64_t stackBytes = 0;
    const LoadedModules* modules = nullptr;
};

// A word of a loaded module's readable segment (an unwind table), read in place: no sanitizer's business.
__attribute__((no_sanitize("address", "thread"))) unw_word_t readModuleWord(uintptr_t address) {
    unw_word_t value;
    __builtin_memcpy(&value, reinterpret_cast<const void*>(address), sizeof value);
    return value;
}

int accessMemory(unw_addr_space_t, unw_word_t address, unw_word_t* value, int write, void* arg) {
    if (write) return -UNW_EREADONLYREG;
    const auto& s = *static_cast<Snapshot*>(arg);
    const uint64_t sp = s.registers[kPerfSp];
    if (address >= sp && address - sp + sizeof *value <= s.stackBytes) {
        std::memcpy(value, s.stack + (address - sp), sizeof *value);
        return 0;
    }
    if (!s.modules->readable(address, sizeof *value)) return -UNW_EINVAL;
    *value = readModuleWord(address);
    return 0;
}

int accessRegister(unw_addr_space_t, unw_regnum_t reg, unw_word_t* value, int write, void* arg) {
    if (write) return -UNW_EREADONLYREG;
    if (reg < 0 || size_t(reg) >= kUnwindToPerf.size()) return -UNW_EBADREG;
    *value = static_cast<Snapshot*>(arg)->registers[size_t(kUnwindToPerf[size_t(reg)])];
    return 0;
}

std::string demangled(const std::string& name) {
    if (name.empty()) return {};
    int status = 0;
    char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    std::string out = status == 0 && text ? text : name;
    free(text);
    return out;
}

} // namespace

struct NativeStackSampler::Unwinder {
    using CreateAddressSpace = unw_addr_space_t (*)(unw_accessors_t*, int);
    using GetAccessors = unw_accessors_t* (*)(unw_addr_space_t);
    using SetCaching = int (*)(unw_addr_space_t, unw_caching_policy_t);
    using InitRemote = int (*)(unw_cursor_t*, unw_addr_space_t, void*);
    using Step = int (*)(unw_cursor_t*);
    using GetRegister = int (*)(unw_cursor_t*, int, unw_word_t*);

    InitRemote initRemote = nullptr;
    Step step = nullptr;
    GetRegister getRegister = nullptr;
    unw_addr_space_t space = nullptr;
    std::string error;

    // libunwind's own reading of this process's unwind tables (found through dl_iterate_phdr), with the
    // registers and the stack of a sample in place of the live ones.
    Unwinder() {
        void* library = dlopen("libunwind-x86_64.so.8", RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            error = "libunwind-x86_64.so.8 is not installed (Debian: apt install libunwind8)";
            return;
        }
        const auto create = reinterpret_cast<CreateAddressSpace>(dlsym(library, "_Ux86_64_create_addr_space"));
        const auto accessors = reinterpret_cast<GetAccessors>(dlsym(library, "_Ux86_64_get_accessors"));
        const auto caching = reinterpret_cast<SetCaching>(dlsym(library, "_Ux86_64_set_caching_policy"));
        auto* local = static_cast<unw_addr_space_t*>(dlsym(library, "_Ux86_64_local_addr_space"));
        initRemote = reinterpret_cast<InitRemote>(dlsym(library, "_Ux86_64_init_remote"));
        step = reinterpret_cast<Step>(dlsym(library, "_Ux86_64_step"));
        getRegister = reinterpret_cast<GetRegister>(dlsym(library, "_Ux86_64_get_reg"));
        if (!create || !accessors || !caching || !local || !initRemote || !step || !getRegister) {
            error = "libunwind-x86_64.so.8 lacks the functions tuneup uses";
            return;
        }
        unw_accessors_t mine = *accessors(*local);
        mine.access_mem = accessMemory;
        mine.access_reg = accessRegister;
        mine.access_fpreg = nullptr;
        mine.resume = nullptr;
        mine.get_proc_name = nullptr;
        space = create(&mine, 0);
        if (!space) {
            error = "libunwind could not make an address space";
            return;
        }
        caching(space, UNW_CACHE_PER_THREAD); // used by the writer thread alone: no locks (and no sigprocmask)
    }
    static const Unwinder& get() {
        static const Unwinder* unwinder = new Unwinder; // never freed: threads may unwind during exit
        return *unwinder;
    }
};

namespace {

LoadedModules& loadedModules() {
    static LoadedModules* modules = new LoadedModules; // never freed: threads may unwind during exit
    return *modules;
}

// The name of the exported symbol at `address` (the user's module only: its symbols are few), "" when it has none.
// dladdr's name lies in the library's memory: it is copied while no library can be unloaded, and only if none was
// since dladdr looked (else the library may be gone, and its name with it: "").
std::string exportedSymbolAt(uintptr_t address) {
    const auto before = LoadedModules::loadCounts();
    Dl_info info {};
    if (!dladdr(reinterpret_cast<void*>(address), &info) || !info.dli_sname) return {};
    ModuleUnloadsHeld held;
    return LoadedModules::loadCounts().second == before.second ? std::string(info.dli_sname) : std::string();
}

} // namespace

namespace {

// Why this process's program is not one to sample, or "" when it is.
std::string notSampledBecause() {
    if (dlsym(RTLD_DEFAULT, "Py_IsInitialized")) return "a Python program: the bootstrap samples its Python stack";
    if (const std::string& program = loadedModules().executable; !isUserCodeModule(program))
        return program + " is a system program, not the user's";
    return {};
}

} // namespace

void NativeStackSampler::prepare() {
    if (notSampledBecause().empty()) Unwinder::get();
}

std::unique_ptr<NativeStackSampler> NativeStackSampler::open(int tid, uint64_t periodNs, std::string& why) {
    if (why = notSampledBecause(); !why.empty()) return nullptr;
    const Unwinder& unwinder = Unwinder::get();
    if (!unwinder.space) {
        why = unwinder.error;
        return nullptr;
    }
    perf_event_attr attr {};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = std::max<uint64_t>(periodNs, 1'000'000);
    attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = kRegisterMask;
    attr.sample_stack_user = kStackBytes;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC; // the recording's clock (clock.h)
    const int fd = int(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0) {
        const int error = errno;
        char paranoid[16] = "?";
        if (const int p = ::open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC); p >= 0) {
            const ssize_t n = read(p, paranoid, sizeof paranoid - 1);
            paranoid[n > 0 ? n - 1 : 0] = '\0'; // without its newline
            close(p);
        }
        why = std::string("perf_event_open refused: ") + strerror(error) + " (kernel.perf_event_paranoid is " + paranoid
            + "; 2 or lower lets a process sample itself, unless a container's seccomp filter forbids it)";
        return nullptr;
    }
    const size_t bytes = (kRingPages + 1) * kPageBytes;
    void* ring = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int mapError = errno;
    // The mapping keeps the event alive: no descriptor of ours stays open for the program to close or reuse.
    close(fd);
    if (ring == MAP_FAILED) {
        why = std::string("cannot map perf's buffer: ") + strerror(mapError);
        return nullptr;
    }
    madvise(ring, bytes, MADV_DONTFORK); // a forked child's writer must not read its parent's samples
    return std::unique_ptr<NativeStackSampler>(new NativeStackSampler(ring, bytes, unwinder));
}

NativeStackSampler::NativeStackSampler(void* ring, size_t ringBytes, const Unwinder& unwinder)
    : m_ring(ring)
    , m_ringBytes(ringBytes)
    , m_unwinder(unwinder) {
}

NativeStackSampler::~NativeStackSampler() {
    if (m_ring) munmap(m_ring, m_ringBytes);
}

namespace {

// A sample unwound: its time, and the addresses of its frames in the user's code (the innermost such frame's module,
// then that module's frames further out, at most UserFrame::kMaxCallers of them).
struct UnwoundSample {
    uint64_t time = 0;
    const LoadedModules::Module* module = nullptr;
    std::vector<uintptr_t> addresses;
};

// False when the record is cut short or has no frame in the user's code.
bool unwindSample(const NativeStackSampler::Unwinder& unwinder, const std::vector<std::byte>& record,
    const LoadedModules& modules, UnwoundSample& out) {
    const std::byte* p = record.data() + sizeof(perf_event_header);
    const std::byte* end = record.data() + record.size();
    const auto take = [&](void* to, size_t bytes) {
        if (size_t(end - p) < bytes) return false;
        std::memcpy(to, p, bytes);
        p += bytes;
        return true;
    };
    uint64_t abi = 0, stackSize = 0, dynamicSize = 0;
    Snapshot s;
    s.modules = &modules;
    bool whole = take(&out.time, 8) && take(&abi, 8) && abi != PERF_SAMPLE_REGS_ABI_NONE
        && take(s.registers.data(), sizeof s.registers) && take(&stackSize, 8);
    if (whole) {
        s.stack = p;
        p += std::min<uint64_t>(stackSize, uint64_t(end - p));
        whole = stackSize > 0 && take(&dynamicSize, 8);
        s.stackBytes = std::min(dynamicSize, stackSize);
    }
    if (!whole) return false;
    unw_cursor_t cursor;
    if (unwinder.initRemote(&cursor, unwinder.space, &s) != 0) return false;
    for (int depth = 0; depth < kMaxFrames; ++depth) {
        unw_word_t ip = 0;
        if (unwinder.getRegister(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
        // A caller's frame holds its return address: the call is the instruction before it.
        const uintptr_t at = depth == 0 ? ip : ip - 1;
        const LoadedModules::Segment* segment = modules.find(at);
        const LoadedModules::Module* module = segment ? &modules.modules[segment->module] : nullptr;
        if (module && module->user && (!out.module || module == out.module)) {
            out.module = module;
            out.addresses.push_back(at);
            if (out.addresses.size() == UserFrame::kMaxCallers + 1) break;
        }
        if (unwinder.step(&cursor) <= 0) break;
    }
    return out.module != nullptr;
}

} // namespace

void NativeStackSampler::drain(const std::function<void(uint64_t timeNs, const UserFrame&)>& out) {
    if (!m_ring) return;
    auto* meta = static_cast<perf_event_mmap_page*>(m_ring);
    const auto* data = static_cast<const std::byte*>(m_ring) + kPageBytes;
    const size_t size = kRingPages * kPageBytes;
    const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    if (tail == head) return;
    LoadedModules& modules = loadedModules();
    std::vector<UnwoundSample> unwound;
    {
        // No library is unloaded from here until the unwinding is done; nothing below waits for the loader's lock.
        ModuleUnloadsHeld held;
        modules.refreshIfChanged();
        std::vector<std::byte> record;
        const auto copy = [&](void* to, uint64_t from, size_t bytes) {
            const size_t at = size_t(from % size), first = std::min(bytes, size - at);
            std::memcpy(to, data + at, first);
            std::memcpy(static_cast<std::byte*>(to) + first, data, bytes - first);
        };
        while (tail < head) {
            perf_event_header header;
            copy(&header, tail, sizeof header);
            if (header.size < sizeof header) { // never: the kernel writes whole records; if it did, skip them all
                tail = head;
                break;
            }
            if (header.type == PERF_RECORD_LOST && header.size >= sizeof header + 16) {
                uint64_t idAndLost[2];
                copy(idAndLost, tail + sizeof header, sizeof idAndLost);
                m_stats.lost += idAndLost[1];
            } else if (header.type == PERF_RECORD_SAMPLE) {
                record.resize(header.size);
                copy(record.data(), tail, header.size);
                ++m_stats.samples;
                const uint64_t started = nowNs();
                UnwoundSample u;
                if (unwindSample(m_unwinder, record, modules, u)) unwound.push_back(std::move(u));
                m_stats.unwindNs += nowNs() - started;
            }
            tail += header.size;
        }
        __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
    }
    // Named once libraries may come and go again (dladdr waits for the loader's lock, which a library's constructor
    // holds while it may call dlclose: not under ModuleUnloadsHeld).
    for (const UnwoundSample& u : unwound) {
        UserFrame frame;
        for (const uintptr_t at : u.addresses) {
            const std::string symbol = exportedSymbolAt(at);
            // The C runtime's entry in the program is no code of the user's: the stack ends there.
            if (symbol == "_start") break;
            if (frame.module.empty())
                frame = { u.module->path, uint64_t(at - u.module->base), demangled(symbol), {} };
            else
                frame.callers.push_back(uint64_t(at - u.module->base));
        }
        if (frame.module.empty()) continue;
        ++m_stats.withUserFrame;
        out(u.time, frame);
    }
}

#else // no libunwind headers at build time

struct NativeStackSampler::Unwinder { };

void NativeStackSampler::prepare() {
}

std::unique_ptr<NativeStackSampler> NativeStackSampler::open(int, uint64_t, std::string& why) {
    why = "tuneup was built without libunwind's headers (Debian: libunwind-dev)";
    return nullptr;
}

NativeStackSampler::~NativeStackSampler() = default;

void NativeStackSampler::drain(const std::function<void(uint64_t, const UserFrame&)>&) {
}

#endif

} // namespace tuneup::agent
