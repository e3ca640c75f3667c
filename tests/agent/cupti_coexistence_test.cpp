// What another CUPTI client's calls take from the agent's GPU capture (cupti_coexistence.h).

#include "cupti_coexistence.h"

#include <gtest/gtest.h>
#include <map>
#include <string>

namespace tuneup::agent {
namespace {

std::map<std::string, std::string> meta(const CuptiCoexistence::Update& update) {
    return { update.meta.begin(), update.meta.end() };
}

constexpr int kKernel = 10, kMemcpy = 1, kRuntime = 5; // CUpti_ActivityKind values

void capturing(CuptiCoexistence& c) {
    c.captureStarted({ { kKernel, "kernel" }, { kMemcpy, "memcpy" }, { kRuntime, "runtime" } });
}

TEST(CuptiCoexistence, WithCaptureOffOnlyTheClientIsNamed) {
    CuptiCoexistence c;
    auto m = meta(c.note(OtherCuptiCall::RegisterBuffers, 0, "libtorch_cuda.so", 100));
    EXPECT_EQ(m["cupti.other_clients"], "libtorch_cuda.so: activity buffers");
    EXPECT_EQ(m.count("capture.cuda.lost"), 0u);
    m = meta(c.note(OtherCuptiCall::Disable, kKernel, "libtorch_cuda.so", 200));
    EXPECT_EQ(m["cupti.other_clients"], "libtorch_cuda.so: activity buffers, disable kind 10");
    EXPECT_FALSE(c.lostAnything());
}

TEST(CuptiCoexistence, TakingTheBuffersLosesEveryKindFromThen) {
    CuptiCoexistence c;
    capturing(c);
    const auto update = c.note(OtherCuptiCall::RegisterBuffers, 0, "libtorch_cuda.so", 5'000);
    EXPECT_TRUE(update.buffersTaken);
    auto m = meta(update);
    EXPECT_EQ(m["capture.cuda.lost_ns"], "5000");
    EXPECT_EQ(m["capture.cuda.lost"].rfind("kernel,memcpy,runtime records after 5000 ns: another CUPTI client "
                                           "(libtorch_cuda.so) took CUPTI's activity buffers",
                  0),
        0u)
        << m["capture.cuda.lost"];
    EXPECT_TRUE(c.lostAnything());
    // Registering again (torch.profiler's next cycle) changes nothing more.
    EXPECT_FALSE(c.note(OtherCuptiCall::RegisterBuffers, 0, "libtorch_cuda.so", 9'000).buffersTaken);
}

TEST(CuptiCoexistence, DisablingOneOfOurKindsLosesThatKind) {
    CuptiCoexistence c;
    capturing(c);
    auto m = meta(c.note(OtherCuptiCall::Disable, kMemcpy, "libmine.so", 700));
    EXPECT_EQ(m["capture.cuda.lost_ns"], "700");
    EXPECT_EQ(m["capture.cuda.lost"].rfind("memcpy records after 700 ns", 0), 0u) << m["capture.cuda.lost"];
    // A kind we never enabled is theirs to disable.
    m = meta(c.note(OtherCuptiCall::Disable, 99, "libmine.so", 800));
    EXPECT_EQ(m.count("capture.cuda.lost"), 0u);
    m = meta(c.note(OtherCuptiCall::Disable, kKernel, "libmine.so", 900));
    EXPECT_EQ(m["capture.cuda.lost"].rfind("memcpy,kernel records after 700 ns", 0), 0u) << m["capture.cuda.lost"];
    EXPECT_EQ(m.count("capture.cuda.lost_ns"), 0u) << "the first loss stays the time";
}

TEST(CuptiCoexistence, ATimestampSourceChangeIsSaid) {
    CuptiCoexistence c;
    capturing(c);
    auto m = meta(c.note(OtherCuptiCall::Timestamp, 0, "libtorch_cuda.so", 300));
    EXPECT_EQ(m["capture.cuda.lost"].rfind("the clock of GPU records after 300 ns", 0), 0u) << m["capture.cuda.lost"];
    EXPECT_NE(m["capture.cuda.lost"].find("changed CUPTI's timestamp source"), std::string::npos);
    EXPECT_FALSE(c.lostAnything()) << "no kind is lost by a clock change alone";
}

} // namespace
} // namespace tuneup::agent
