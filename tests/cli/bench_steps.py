"""A program with training steps and nothing else, for `tuneup bench`'s quick tests: each step is a
range named "step" (through the agent's Python entry point, when the agent is there) around a sleep.

  bench_steps.py --steps N --ms T [--exit CODE] [--fail-after K]
"""

import argparse
import ctypes
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--ms", type=float, default=10)
parser.add_argument("--exit", type=int, default=0, help="exit with this code after the steps")
parser.add_argument("--fail-after", type=int, default=-1, help="raise an error after this many steps")
args = parser.parse_args()

try:
    agent = ctypes.CDLL(None)
    push, pop = agent.tuneup_range_push, agent.tuneup_range_pop
    push.argtypes = [ctypes.c_char_p]
except AttributeError:  # not under tuneup
    push = pop = None

for i in range(args.steps):
    if i == args.fail_after:
        raise RuntimeError("failing after %d steps, as asked" % i)
    if push:
        push(b"step")
    time.sleep(args.ms / 1000.0)
    if pop:
        pop()
print("bench_steps: %d steps of %g ms" % (args.steps, args.ms))
sys.exit(args.exit)
