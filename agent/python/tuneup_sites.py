"""Where in the user's code: the call sites of the calls tuneup's Python bootstrap watches, and the main thread's
sampled Python stack (docs/agent.md, "Call sites"). Loaded by sitecustomize.py, beside it, when the agent records.

A watched call notes its start and end and the innermost frame of the user's code it came from: the first
frame, walking out from the caller, whose file is not Python's standard library, an installed package
(site-packages, dist-packages), PyTorch's or this bootstrap's, nor made up ("<string>", "<frozen ...>",
"<eval_with_key>"). Whether a code object is the user's is decided once and kept in a dict, so a call costs
two clock reads, a frame walk of usually one step and a tuple appended to a list; the records go to the
agent in batches of 1024, with the names they use (file, function, call) numbered. Tensor methods that return
too fast to have done GPU work are not noted (MIN_TENSOR_CALL_NS).
"""

import array
import atexit
import ctypes
import itertools
import os
import sys
import sysconfig
import threading
import time

_BATCH = 1024  # records a thread keeps before handing them over

# Tensor methods (.item(), .to(), ...) that return within this did no GPU work (a CPU tensor's .item(), a .to()
# that changes nothing) and are not noted: the CUDA call of a copy or a sync alone takes longer. A loop over
# CPU tensors then pays two clock reads per call, not a record.
MIN_TENSOR_CALL_NS = 1500

_PACKAGE_DIRS = ("/site-packages/", "/dist-packages/")


def _not_compiling():
    return False


# torch.compiler.is_compiling once torch is imported (Sites.set_is_compiling): while Dynamo traces, a watched call is
# left alone. Dynamo reads this global as the function it is, which it knows to be constant.
_is_compiling = _not_compiling


def _system_prefixes():
    """Directories whose files are not the user's: Python's own library and installed packages."""
    prefixes = set()
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = paths.get(key)
        if path:
            prefixes.add(os.path.join(path, ""))
            prefixes.add(os.path.join(os.path.realpath(path), ""))
    prefixes.add(os.path.join(os.path.dirname(os.path.abspath(__file__)), ""))
    return prefixes


class Sites:
    MIN_TENSOR_CALL_NS = MIN_TENSOR_CALL_NS

    def __init__(self, sample_ms):
        lib = ctypes.CDLL(None)
        self._hand_name = lib.tuneup_python_name
        self._hand_name.argtypes = [ctypes.c_int64, ctypes.c_char_p]
        self._hand_name.restype = None
        self._hand_calls = lib.tuneup_python_calls
        self._hand_samples = lib.tuneup_python_samples
        for hand in (self._hand_calls, self._hand_samples):
            hand.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]
            hand.restype = None
        self._sample_seconds = sample_ms / 1000.0
        self._prefixes = _system_prefixes()
        # Code object -> (file number, function number) when it is the user's, else False: read on every
        # watched call. Names are numbered once (kept across fork) and handed to the agent by each thread
        # before the records that use them, on that thread's ring, so the agent always knows them first.
        self.frames = {}
        self._numbers = {}  # name -> number
        self._names = [""]  # number -> name, append only
        self._local = threading.local()  # .records, .tid: this thread's calls; .named: names it handed
        self._threads = []  # (native thread id, records) of every thread that made a noted call
        self._lock = threading.Lock()  # hand-overs: a thread's own, the sampler's, and all at exit
        self._sampling = False
        self._sampler = None  # its thread
        self._samples = None  # (native thread id of the main thread, records) of the sampler
        self._warned = False
        os.register_at_fork(after_in_child=self._forget_parent)
        atexit.register(self._hand_all)

    @staticmethod
    def set_is_compiling(function):
        global _is_compiling
        _is_compiling = function

    # -- which code is the user's --

    def exclude(self, directory):
        """Files under `directory` (a library: PyTorch's own) are not the user's."""
        self._prefixes.add(os.path.join(os.path.abspath(directory), ""))
        self.frames.clear()

    def _number(self, name):
        number = self._numbers.get(name)
        if number is None:
            number = self._numbers[name] = len(self._names)
            self._names.append(name)
        return number

    def _classify(self, code):
        path = code.co_filename
        mine = not (
            path.startswith("<")
            or any(part in path for part in _PACKAGE_DIRS)
            or os.path.abspath(path).startswith(tuple(self._prefixes))
        )
        names = False
        if mine:
            names = (self._number(os.path.abspath(path)), self._number(getattr(code, "co_qualname", code.co_name)))
        self.frames[code] = names
        return names

    def user_frame(self, frame):
        """(frame, its numbers) of the innermost frame of the user's code from `frame` outwards; (None, None)
        when there is none."""
        frames = self.frames
        while frame is not None:
            names = frames.get(frame.f_code)
            if names is None:
                names = self._classify(frame.f_code)
            if names:
                return frame, names
            frame = frame.f_back
        return None, None

    # -- watched calls --

    def _records(self):
        """This thread's records: (start, end, call, file, line, function) per call. A list of tuples: appending
        one costs a third of extending an array with its six numbers; they become numbers at the hand-over."""
        local = self._local
        try:
            return local.records
        except AttributeError:
            local.tid = threading.get_native_id()
            records = local.records = []
            with self._lock:
                self._threads.append((local.tid, records))
            return records

    def watch(self, name, function, min_ns=0):
        """`function`, noting each call with the user's line it came from; calls that return within `min_ns`
        are not noted. The program's exceptions pass through untouched."""
        import functools

        call = self._number(name)
        frames = self.frames
        clock = time.perf_counter_ns
        frame_of = sys._getframe
        classify = self._classify
        records_of = self._records
        hand = self.hand
        batch = _BATCH
        sites = self

        @functools.wraps(function)
        def watched(*args, **kwargs):
            if _is_compiling():
                return function(*args, **kwargs)
            start = clock()
            try:
                return function(*args, **kwargs)
            finally:  # a call that raises is noted too: the DataLoader's last __next__ waits, then stops
                end = clock()
                frame = frame_of(1) if end - start >= min_ns else None
                while frame is not None:
                    names = frames.get(frame.f_code)
                    if names is None:
                        names = classify(frame.f_code)
                    if names:
                        try:
                            records = sites._local.records
                        except AttributeError:
                            records = records_of()
                        records.append((start, end, call, names[0], frame.f_lineno, names[1]))
                        if len(records) >= batch:
                            hand()
                        break
                    frame = frame.f_back

        watched._tuneup_wrapped = True
        return watched

    def watch_method(self, owner, attribute, name, min_ns=0):
        """owner.attribute (a method, a module's function, a class's __init__) watched as `name`, when it
        exists."""
        function = getattr(owner, attribute, None)
        if callable(function) and not getattr(function, "_tuneup_wrapped", False):
            setattr(owner, attribute, self.watch(name, function, min_ns))

    # -- the main thread's stack, sampled --

    def start_sampling(self):
        """Samples the main thread's Python stack from a daemon thread of this process, every
        TUNEUP_SAMPLE_MS: sys._current_frames(), as py-spy reads it from outside."""
        if self._sampling or self._sample_seconds <= 0:
            return
        self._sampling = True
        self._sampler = threading.Thread(target=self._sample_main_thread, name="tuneup-python-sampler", daemon=True)
        self._sampler.start()

    def stop_sampling(self):
        """Stops the sampler and waits for it (benchmarks compare with and without)."""
        self._sampling = False
        if self._sampler is not None:
            self._sampler.join()
            self._sampler = None

    def _sample_main_thread(self):
        main = threading.main_thread()
        ident = main.ident
        records = []  # (time, file, line, function) per sample
        current_frames = sys._current_frames
        clock = time.perf_counter_ns
        sleep = time.sleep
        period = self._sample_seconds
        self._samples = (main.native_id, records)
        try:
            while self._sampling:
                sleep(period)
                sample = self._sample_once(ident, current_frames, clock)
                if sample is False:
                    break
                if sample is not None:
                    records.append(sample)
                    if len(records) >= _BATCH:
                        self._hand_sampled()
        except Exception as error:  # the sampler stops; the program goes on
            sys.stderr.write("tuneup: Python bootstrap: sampling the main thread: %s (stopped)\n" % error)

    def _sample_once(self, ident, current_frames, clock):
        """(time, file, line, function) of the thread's innermost user frame; None without one; False when the
        thread is gone. Holds no frame after it returns: a frame kept alive keeps its locals (tensors) alive."""
        frame = current_frames().get(ident)
        if frame is None:
            return False
        now = clock()
        frame, names = self.user_frame(frame)
        return None if frame is None else (now, names[0], frame.f_lineno, names[1])

    def _hand_sampled(self):
        if self._samples is not None:
            with self._lock:
                self._hand_over(self._hand_samples, *self._samples)

    # -- handing over --

    def _hand_over(self, hand, tid, records):
        """`records` to the agent through `hand`, after the names this thread has not handed yet; `records` keeps
        what was added meanwhile."""
        count = len(records)
        if count == 0:
            return
        local, names = self._local, self._names
        named = getattr(local, "named", 1)
        while named < len(names):
            self._hand_name(named, names[named].encode("utf-8", "replace"))
            named += 1
        local.named = named
        batch = array.array("q", itertools.chain.from_iterable(records[:count]))
        del records[:count]
        hand(tid, batch.buffer_info()[0], count)

    def hand(self):
        """Hands this thread's calls to the agent (every 1024, and at each optimizer step). Never raises into
        the program's call."""
        records = getattr(self._local, "records", None)
        if not records:
            return
        try:
            with self._lock:
                self._hand_over(self._hand_calls, self._local.tid, records)
        except Exception as error:
            del records[:]
            if not self._warned:
                self._warned = True
                sys.stderr.write("tuneup: Python bootstrap: call sites: %s (recording goes on)\n" % error)

    def _hand_all(self):
        self._sampling = False
        try:
            with self._lock:
                for tid, records in self._threads:
                    self._hand_over(self._hand_calls, tid, records)
            self._hand_sampled()
        except Exception as error:  # at exit: say it, lose only these records
            sys.stderr.write("tuneup: Python bootstrap: handing over call sites at exit: %s\n" % error)

    def _forget_parent(self):
        """In a forked child: the parent's records are its own, its names were handed to its file, and its
        sampler thread did not come along."""
        self._local = threading.local()
        self._threads = []
        self._lock = threading.Lock()
        self._sampling = False
        self._sampler = None
        self._samples = None
