# Sourced by the long-run scripts beside it. glibc's malloc let a long CPU run grow to 16-17 GB resident
# and its steps slow by half; jemalloc did not (docs/training.md, "Long runs on the CPU"): preloaded where
# Debian's libjemalloc2 is installed. It changes the allocator only, not a number the run computes.
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [ -f "$jemalloc" ]; then export LD_PRELOAD="$jemalloc${LD_PRELOAD:+:$LD_PRELOAD}"; fi
