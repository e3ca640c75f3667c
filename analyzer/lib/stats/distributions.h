#pragma once
// Quantiles of the normal and Student's t distributions, for the statistics bench and compare share
// (descriptive.h): the small-sample widening of bootstrap intervals (bootstrap.h).

namespace tuneup::stats {

// P(T <= t) for Student's t with `df` > 0 degrees of freedom (through the regularized incomplete beta).
double studentTCdf(double t, double df);
// The p-quantile, 0 < p < 1: studentTQuantile(0.975, 4) = 2.776.
double studentTQuantile(double p, double df);
// The standard normal's p-quantile: normalQuantile(0.975) = 1.960.
double normalQuantile(double p);

} // namespace tuneup::stats
