// `sync_file_range` is declared only with _GNU_SOURCE, which Swift's Glibc module leaves out.
#ifdef __linux__
#define _GNU_SOURCE
#include <fcntl.h>
#endif

#include "AmberFileFlush.h"

int amber_start_flushing(int descriptor, long long offset, long long count) {
#ifdef __linux__
    return sync_file_range(descriptor, (off_t)offset, (off_t)count, SYNC_FILE_RANGE_WRITE);
#else
    (void)descriptor;
    (void)offset;
    (void)count;
    return 0;
#endif
}
