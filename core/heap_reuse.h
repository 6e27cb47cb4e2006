// Keeping freed heap memory for reuse instead of handing it back to the system.
//
// The planner builds and frees window-sized vectors (a window's samples, sorted and
// cut) for every window of an epoch. glibc's malloc hands large freed blocks back to
// the system (munmap, or trimming the heap's top) by thresholds it adjusts as it goes,
// and the next window then faults the same pages in again. Which blocks go back depends
// on the order of allocations: 10 million samples at 64 ranks, planned by two builds
// whose plans differ only in which step some batches run, faulted 21,684 and 199,216
// pages in and took 5.0-6.0 s and 7.2-8.9 s (docs/plan_history.md, twenty-ninth session).
// With the thresholds fixed, the second faulted 18,004 and took 4.6-5.5 s; peak memory
// stayed at 80 MB (a window's working set is freed and reused, not accumulated).
#pragma once

namespace evenfeed {

// Raises glibc's mmap and trim thresholds for the whole process (mallopt): blocks up
// to 32 MiB come from the heap, and free memory at the heap's top is kept up to 512
// MiB. For programs that plan many windows: `evenfeed plan` and evenfeed_bench_plan
// call it; a program embedding the planner may. Does nothing where malloc is not
// glibc's.
void keep_freed_heap_for_reuse();

}  // namespace evenfeed
