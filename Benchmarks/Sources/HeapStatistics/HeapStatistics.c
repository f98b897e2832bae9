// glibc's mallinfo2 is not visible to Swift through the Glibc module, and mallinfo is deprecated
// (its int fields overflow past 2 GiB): this is the one C function the benchmarks need.
#include "HeapStatistics.h"

#if defined(__APPLE__)
#include <malloc/malloc.h>

size_t heap_bytes_in_use(void) {
    malloc_statistics_t statistics;
    malloc_zone_statistics(NULL, &statistics);
    return statistics.size_in_use;
}
#elif defined(__linux__)
#include <malloc.h>

size_t heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    // Small blocks from the arenas, and the large ones glibc maps on their own.
    return info.uordblks + info.hblkhd;
}
#else
size_t heap_bytes_in_use(void) {
    return 0;
}
#endif
