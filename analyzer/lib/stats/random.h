#pragma once
// A seeded random source whose sequence is the same on every platform and compiler (std::mt19937_64
// is specified bit for bit; the standard distributions are not), so that a bootstrap with a given seed
// gives the same interval everywhere and the tests can pin their results.

#include <cmath>
#include <cstdint>
#include <random>

namespace tuneup::stats {

class Random {
public:
    explicit Random(uint64_t seed)
        : m_engine(seed) { }

    // Uniform in [0, n), n >= 1. The modulo bias is below n / 2^64: nothing for the sample sizes here.
    size_t below(size_t n) { return size_t(m_engine() % n); }
    // Uniform in [0, 1).
    double uniform() { return double(m_engine() >> 11) * 0x1.0p-53; }
    // Standard normal (Box-Muller; one value per call, the twin is dropped for simplicity).
    double normal() {
        double u = uniform();
        while (u <= 0)
            u = uniform();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * uniform());
    }

private:
    std::mt19937_64 m_engine;
};

} // namespace tuneup::stats
