"""Peak-memory probes for the benchmarks.

On a GPU, ``torch.cuda.max_memory_allocated``. On a Linux CPU, the increase of the peak
resident set size (``VmHWM``, reset by writing 5 to ``/proc/self/clear_refs``, page-exact),
with glibc's mmap threshold fixed at 64 KiB and ``malloc_trim(0)`` before the call so that
freed memory really leaves the process; elsewhere psutil sampling (approximate).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

import torch


class PeakRSS:
    """Peak resident set size above the starting value during a ``with`` block (CPU).

    On Linux the kernel's high-water mark is reset by writing 5 to /proc/self/clear_refs and
    read back from VmHWM in /proc/self/status (exact, page granularity). Elsewhere a thread
    samples the RSS every ~0.5 ms with psutil (approximate; short peaks can be missed).
    """

    def __init__(self):
        self.method = "linux_vmhwm" if self._linux_ok() else "psutil_sampling"

    @staticmethod
    def _linux_ok():
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            return "VmHWM" in Path("/proc/self/status").read_text()
        except OSError:
            return False

    @staticmethod
    def _status(key):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        raise KeyError(key)

    def __enter__(self):
        if self.method == "linux_vmhwm":
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.base = self._status("VmRSS")
            return self
        import psutil
        self.proc = psutil.Process()
        self.base = self.peak = self.proc.memory_info().rss
        self._stop = False

        def loop():
            while not self._stop:
                self.peak = max(self.peak, self.proc.memory_info().rss)
                time.sleep(0.0005)
        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.method == "linux_vmhwm":
            self.delta = self._status("VmHWM") - self.base
            return
        self.peak = max(self.peak, self.proc.memory_info().rss)
        self._stop = True
        self.thread.join()
        self.delta = self.peak - self.base


def malloc_trim():
    """Give the free memory of glibc's heap back to the OS before a measurement, so that
    new allocations show up in the RSS (Linux/glibc only; best effort)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def release_freed_memory_to_os():
    """glibc keeps freed blocks below a dynamic mmap threshold on its heap, so later
    allocations do not raise the RSS; a fixed 64 KiB threshold makes every large tensor a
    fresh mmap that is returned on free (Linux/glibc only; best effort)."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        M_MMAP_THRESHOLD = -3
        return bool(libc.mallopt(M_MMAP_THRESHOLD, 64 * 1024))
    except (OSError, AttributeError):
        return False


def peak_bytes(call: Callable[[], object], device: torch.device) -> int:
    """The peak memory that one ``call()`` adds, in bytes."""
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        call()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - before
    malloc_trim()
    with PeakRSS() as probe:
        call()
    return probe.delta


def method(device: torch.device) -> str | None:
    """How :func:`peak_bytes` measures on this machine (call once, before measuring: on a
    CPU it fixes glibc's mmap threshold)."""
    if device.type == "cuda":
        return ("cuda: torch.cuda.max_memory_allocated during the call minus memory_allocated "
                "before")
    fixed = release_freed_memory_to_os()
    if PeakRSS().method == "linux_vmhwm":
        text = ("cpu: peak RSS increase during the call (VmHWM after resetting it via "
                "/proc/self/clear_refs)")
    else:
        try:
            import psutil  # noqa: F401
        except ImportError:
            return None
        text = "cpu: peak RSS increase, sampled every ~0.5 ms (psutil)"
    return text + ("; glibc mmap threshold fixed at 64 KiB and malloc_trim before each call"
                   if fixed else "; the allocator may reuse memory, so the delta can understate")
