"""Cost of the Python bootstrap per training step. Under `tuneup record` (which loads the bootstrap),
times optimizer.zero_grad() as wrapped by the bootstrap (a range pushed and popped through the agent,
plus the set_to_none fact) against the same call unwrapped, in one process, the median of 9 alternating rounds of
100 000 calls. A training step makes four such calls (DataLoader batch, zero_grad, backward, step).
Then the forward pass: a model of 32 nested modules called through the bootstrap's nn.Module.__call__
(one range around the outermost call, a counter test in each inner one) against the original. Then the
call sites (tuneup_sites.py): Tensor.item() as the bootstrap watches it against the original, called from this
file and from one level deeper; and the main thread's sampler: a pure-Python loop with the sampler running
(every TUNEUP_SAMPLE_MS) against stopped, 30 pairs, each side first in turn.

    build/release/bin/tuneup record -o /tmp/b.db --force -- python3 bench/bench_bootstrap.py
"""

import inspect
import time

import torch

CALLS = 100_000


def time_per_call(function, *args, calls=CALLS):
    start = time.perf_counter()
    for _ in range(calls):
        function(*args)
    return (time.perf_counter() - start) / calls


def main():
    optimizer = torch.optim.SGD(torch.nn.Linear(4, 2).parameters(), lr=0.01)
    wrapped = type(optimizer).zero_grad
    original = inspect.unwrap(wrapped)
    if original is wrapped:
        raise SystemExit("the bootstrap is not loaded: run this under `tuneup record`")
    # Rounds alternate the two so that a noisy machine disturbs both alike; the median difference.
    rounds = [(time_per_call(original, optimizer), time_per_call(wrapped, optimizer)) for _ in range(9)]
    costs = sorted(w - o for o, w in rounds)
    cost = costs[len(costs) // 2]
    base = sorted(o for o, _ in rounds)[len(rounds) // 2]
    print("zero_grad: %.2f us unwrapped; the bootstrap adds %.2f us per wrapped call, %.1f us per step (4 calls)"
          % (base * 1e6, cost * 1e6, 4 * cost * 1e6))

    # The forward pass: 16 Identity layers and 15 Sequentials nested inside one, 32 module calls.
    model = torch.nn.Identity()
    for _ in range(16):
        model = torch.nn.Sequential(torch.nn.Identity(), model)
    model = torch.nn.Sequential(model)
    x = torch.zeros(1)
    marking = torch.nn.Module.__call__
    plain = inspect.unwrap(marking)
    if plain is marking:
        raise SystemExit("the bootstrap's forward range is not installed")
    calls = sum(1 for _ in model.modules())
    forward_rounds = []
    for _ in range(9):
        torch.nn.Module.__call__ = plain
        unwrapped = time_per_call(model, x, calls=10_000)
        torch.nn.Module.__call__ = marking
        forward_rounds.append((unwrapped, time_per_call(model, x, calls=10_000)))
    forward_costs = sorted(w - o for o, w in forward_rounds)
    print("forward of %d nested modules: %.1f us unwrapped; the bootstrap adds %.2f us per forward"
          % (calls, sorted(o for o, _ in forward_rounds)[4] * 1e6, forward_costs[4] * 1e6))

    call_sites()


def median(values):
    return sorted(values)[len(values) // 2]


def call_sites():
    import sitecustomize

    sites = sitecustomize._sites
    if sites is None:
        raise SystemExit("the bootstrap records no call sites here: run this under `tuneup record`")
    watched = torch.Tensor.item
    original = inspect.unwrap(watched)
    if original is watched:
        raise SystemExit("Tensor.item is not watched")
    t = torch.ones(())

    # A CPU tensor's .item() returns within MIN_TENSOR_CALL_NS: watched, not noted. A call on a GPU tensor is
    # noted: `noted` is the same wrapper without that minimum, so that the CPU shows what a noted call costs.
    noted = sites.watch("Tensor.item (bench)", original)

    def deeper(x):
        return noted(x)

    rounds = []
    for _ in range(9):
        torch.Tensor.item = original
        plain = time_per_call(t.item, calls=200_000)
        torch.Tensor.item = watched
        rounds.append((plain, time_per_call(t.item, calls=200_000), time_per_call(noted, t, calls=200_000),
                       time_per_call(deeper, t, calls=200_000)))
        sites.hand()  # what the records cost to hand over is in the rounds: every 1024 calls
    torch.Tensor.item = watched
    plain = median([r[0] for r in rounds])
    print("Tensor.item(): %.0f ns unwatched; watched, not noted (a CPU tensor): +%.0f ns; noted: +%.0f ns, "
          "+%.0f ns one frame deeper (hand-over to the agent included)"
          % (plain * 1e9, median([r[1] - r[0] for r in rounds]) * 1e9, median([r[2] - r[0] for r in rounds]) * 1e9,
             median([r[3] - r[0] for r in rounds]) * 1e9))

    # The sampler: a pure-Python loop (it holds the interpreter's lock, which each sample must take).
    def spin(n=3_000_000):
        total = 0
        for i in range(n):
            total += i
        return total

    if not sites._sampling:
        print("sampler: off (TUNEUP_SAMPLE_MS=0)")
        return
    def timed(sampling):
        (sites.start_sampling if sampling else sites.stop_sampling)()
        start = time.perf_counter()
        spin()
        return time.perf_counter() - start

    loops = []
    for k in range(30):  # which goes first alternates: a pair's first loop runs on a colder machine
        first = timed(k % 2 == 0)
        second = timed(k % 2 == 1)
        loops.append((first, second) if k % 2 == 0 else (second, first))
    sites.start_sampling()
    costs = sorted((s - u) / u for s, u in loops)
    print("sampler every %.0f ms: a pure-Python loop of %.0f ms takes %+.1f%% with it (quartiles %+.1f%%, %+.1f%%)"
          % (sites._sample_seconds * 1e3, median([u for _, u in loops]) * 1e3, median(costs) * 100,
             costs[len(costs) // 4] * 100, costs[3 * len(costs) // 4] * 100))


if __name__ == "__main__":
    main()
