import gc
import threading

import psutil
import torch


def byte2gb(x):
    return int(x / 2**30)


# This context manager is used to track the peak memory usage of the process
class MemoryTrace:
    def __enter__(self):
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_max_memory_allocated()  # reset the peak gauge to zero
        self.begin = byte2gb(torch.cuda.memory_allocated())
        self.process = psutil.Process()
        self.cpu_begin = byte2gb(self.cpu_mem_used())
        self.peak_monitoring = True
        peak_monitor_thread = threading.Thread(target=self.peak_monitor_func)
        peak_monitor_thread.daemon = True
        peak_monitor_thread.start()
        return self

    def cpu_mem_used(self):
        """get resident set size memory for the current process"""
        return self.process.memory_info().rss

    def peak_monitor_func(self):
        self.cpu_peak = -1

        while True:
            self.cpu_peak = max(self.cpu_mem_used(), self.cpu_peak)

            # can't sleep or will not catch the peak right (this comment is here on purpose)
            # time.sleep(0.001) # 1msec

            if not self.peak_monitoring:
                break

    def __exit__(self, *exc):
        self.peak_monitoring = False

        gc.collect()
        torch.cuda.empty_cache()  # drop cached blocks before reading the final numbers
        self.end = byte2gb(torch.cuda.memory_allocated())
        self.peak = byte2gb(torch.cuda.max_memory_allocated())
        cuda_info = torch.cuda.memory_stats()
        self.peak_active_gb = byte2gb(cuda_info["active_bytes.all.peak"])
        self.malloc_retries = cuda_info.get("num_alloc_retries", 0)
        self.m_cuda_ooms = cuda_info.get("num_ooms", 0)
        self.used = byte2gb(self.end - self.begin)
        self.peaked = byte2gb(self.peak - self.begin)
        self.max_reserved = byte2gb(torch.cuda.max_memory_reserved())

        self.cpu_end = self.cpu_mem_used()
        self.cpu_used = byte2gb(self.cpu_end - self.cpu_begin)
        self.cpu_peaked = byte2gb(self.cpu_peak - self.cpu_begin)

    def print_stats(self):
        print(f"Max CUDA memory allocated was {self.peak} GB")
        print(f"Max CUDA memory reserved was {self.max_reserved} GB")
        print(f"Peak active CUDA memory was {self.peak_active_gb} GB")
        print(f"CUDA Malloc retries : {self.malloc_retries}")
        print(f"CPU Total Peak Memory consumed during the train (max): {self.cpu_peaked + self.cpu_begin} GB")


def log_gpu_memory(tag, rank=0):
    """One-line memory summary, printed by rank 0 only."""
    if rank != 0:
        return
    if not torch.cuda.is_available():
        print(f"[{tag}] no CUDA device, skipping GPU memory log")
        return
    alloc = torch.cuda.memory_allocated() / 2**30
    reserved = torch.cuda.memory_reserved() / 2**30
    free, total = torch.cuda.mem_get_info()
    print(f"[{tag}] allocated {alloc:.2f} GiB | reserved {reserved:.2f} GiB | "
          f"free {free / 2**30:.2f} / {total / 2**30:.2f} GiB")


def summarize(traces):
    """Aggregate several MemoryTrace results (one per epoch) into a dict for logging."""
    keys = ["peak", "max_reserved", "peak_active_gb", "malloc_retries", "cpu_peaked"]
    return {k: max(getattr(t, k) for t in traces) for k in keys}
