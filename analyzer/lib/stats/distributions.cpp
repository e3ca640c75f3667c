#include "stats/distributions.h"

#include <cmath>

namespace tuneup::stats {

namespace {

// The continued fraction of the incomplete beta function (modified Lentz), for x < (a + 1) / (a + b + 2).
double betaContinuedFraction(double a, double b, double x) {
    constexpr double kTiny = 1e-300, kEpsilon = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (std::abs(d) < kTiny) d = kTiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 500; ++m) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + aa * d;
        c = 1 + aa / c;
        if (std::abs(d) < kTiny) d = kTiny;
        if (std::abs(c) < kTiny) c = kTiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + aa * d;
        c = 1 + aa / c;
        if (std::abs(d) < kTiny) d = kTiny;
        if (std::abs(c) < kTiny) c = kTiny;
        d = 1 / d;
        const double step = d * c;
        h *= step;
        if (std::abs(step - 1) < kEpsilon) break;
    }
    return h;
}

// I_x(a, b).
double regularizedBeta(double x, double a, double b) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    const double front
        = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
    if (x < (a + 1) / (a + b + 2)) return front * betaContinuedFraction(a, b, x) / a;
    return 1 - front * betaContinuedFraction(b, a, 1 - x) / b;
}

// The x in [low, high] where the increasing function cdf reaches p, by bisection.
template <class Cdf> double invert(Cdf cdf, double p, double low, double high) {
    for (int i = 0; i < 200; ++i) {
        const double middle = (low + high) / 2;
        (cdf(middle) < p ? low : high) = middle;
    }
    return (low + high) / 2;
}

} // namespace

double studentTCdf(double t, double df) {
    const double tail = 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
    return t >= 0 ? 1 - tail : tail;
}

double studentTQuantile(double p, double df) {
    if (p == 0.5) return 0;
    if (p < 0.5) return -studentTQuantile(1 - p, df);
    return invert([df](double t) { return studentTCdf(t, df); }, p, 0, 1e7);
}

double normalQuantile(double p) {
    if (p == 0.5) return 0;
    if (p < 0.5) return -normalQuantile(1 - p);
    return invert([](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }, p, 0, 40);
}

} // namespace tuneup::stats
