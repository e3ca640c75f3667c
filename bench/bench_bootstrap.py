"""Cost of the Python bootstrap per training step. Under `tuneup record` (which loads the bootstrap),
times optimizer.zero_grad() as wrapped by the bootstrap (a range pushed and popped through the agent,
plus the set_to_none fact) against the same call unwrapped, in one process, the median of 9 alternating rounds of
100 000 calls. A training step makes four such calls (DataLoader batch, zero_grad, backward, step).

    build/release/bin/tuneup record -o /tmp/b.db --force -- python3 bench/bench_bootstrap.py
"""

import inspect
import time

import torch

CALLS = 100_000


def time_per_call(function, *args):
    start = time.perf_counter()
    for _ in range(CALLS):
        function(*args)
    return (time.perf_counter() - start) / CALLS


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


if __name__ == "__main__":
    main()
