"""How a training run asks glibc for its memory: large blocks mapped of their own, freed
blocks given back, so that the peak of a run is what its arrays take."""
import ctypes
import sys


def _glibc():
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None)
            return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
        except OSError:
            pass
    return None


def large_blocks_from_mmap():
    """Have glibc serve every block of 1 MiB or more with its own mmap. By default it
    raises that threshold (up to 32 MiB) each time a large block is freed, so that
    after encoding the learner's arrays would come from its heap: zero-filled there
    (every page resident, where a fresh mapping takes memory only where written) and
    kept after they are freed. The setting holds for the rest of the process (glibc
    cannot give the raising back): for a Python program that trains, large buffers
    then cost a mapping each, and freed ones return to the system at once."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD; a fixed value turns the raising off


def return_freed_memory():
    """Give the memory that freed small blocks leave in glibc's heap back to the system."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
