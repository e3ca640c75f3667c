"""Cost of the Python bootstrap per training step. Under `tuneup record` (which loads the bootstrap),
times optimizer.zero_grad() as wrapped by the bootstrap (a range pushed and popped through the agent,
plus the set_to_none fact) against the same call unwrapped, in one process, the median of 9 alternating rounds of
100 000 calls. A training step makes four such calls (DataLoader batch, zero_grad, backward, step).
Then the forward pass: a model of 32 nested modules called through the bootstrap's nn.Module.__call__
(one range around the outermost call, a counter test in each inner one) against the original.

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


if __name__ == "__main__":
    main()
