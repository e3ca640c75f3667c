// A command for the launcher's signal tests: logs each SIGINT, SIGQUIT, SIGTERM and SIGHUP it gets as
// "<signal> <si_code> <sender pid>" to LOG, touches READY once its handlers are in place, and exits
// 0 after the first signal (or after SECONDS without one, code 2).
//   signal_client LOG READY [SECONDS]

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <unistd.h>

namespace {

int s_log = -1;
volatile sig_atomic_t s_received = 0;

// Async-signal-safe: decimal digits into `out`.
char* decimal(char* out, long value) {
    char digits[24];
    int n = 0;
    if (value < 0) {
        *out++ = '-';
        value = -value;
    }
    do
        digits[n++] = char('0' + value % 10);
    while ((value /= 10) > 0);
    while (n > 0)
        *out++ = digits[--n];
    return out;
}

void onSignal(int sig, siginfo_t* info, void*) {
    char line[96];
    const char* name = sig == SIGINT ? "INT" : sig == SIGQUIT ? "QUIT" : sig == SIGTERM ? "TERM" : "HUP";
    char* at = line;
    for (const char* c = name; *c; ++c)
        *at++ = *c;
    *at++ = ' ';
    at = decimal(at, info->si_code);
    *at++ = ' ';
    at = decimal(at, info->si_pid);
    *at++ = '\n';
    if (write(s_log, line, size_t(at - line)) < 0) { }
    s_received = 1;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: signal_client LOG READY [SECONDS]\n");
        return 64;
    }
    s_log = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const int seconds = argc > 3 ? atoi(argv[3]) : 30;
    struct sigaction action { };
    action.sa_sigaction = onSignal;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    for (int sig : { SIGINT, SIGQUIT, SIGTERM, SIGHUP })
        sigaction(sig, &action, nullptr);
    close(open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    // Once a signal came, a little longer: a second copy (a double delivery) would be logged too.
    for (int tick = 0; tick < seconds * 100; ++tick) {
        if (s_received) {
            usleep(300'000);
            return 0;
        }
        usleep(10'000);
    }
    return 2;
}
