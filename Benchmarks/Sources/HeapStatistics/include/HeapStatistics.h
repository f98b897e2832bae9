#ifndef HEAP_STATISTICS_H
#define HEAP_STATISTICS_H

#include <stddef.h>

/// The bytes the allocator has handed out and not taken back, large blocks included; 0 where unknown.
size_t heap_bytes_in_use(void);

#endif
