#ifndef AMBER_FILE_FLUSH_H
#define AMBER_FILE_FLUSH_H

/// Starts writing the dirty pages of bytes `offset` to `offset + count` of the file `descriptor`
/// to disk, without waiting for them (`sync_file_range` with `SYNC_FILE_RANGE_WRITE` on Linux;
/// nothing elsewhere), so that a later `fsync` has less to wait for. Returns 0, or -1 with `errno`.
int amber_start_flushing(int descriptor, long long offset, long long count);

#endif
