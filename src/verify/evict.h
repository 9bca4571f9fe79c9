// Internal to src/verify: evicting bytes the background hasher has read from every cache (see
// evict.cpp), so that the training loop can write their memory again without asking another core.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace maroon::verify {

// Writes back and invalidates, in every core's caches, the cache lines holding [p, p + n)
// (CLFLUSHOPT, or CLFLUSH where the CPU lacks it; nothing off x86-64). The bytes never change.
void evict_from_caches(const uint8_t* p, size_t n);

// Whether eviction is worth its flushes here: true unless every core this process may run on
// shares one last-level cache (Linux sysfs), where a line the hasher read is handed to the loop's
// core through that cache and a flush only sends it to memory, from where the loop reads it back
// (the Intel Xeon of docs/performance/threads.md: eviction cost 5-8% of the MLP run's CPU time).
// Where the cores share no cache (the 2-vCPU EPYC evict.cpp's figures come from), or sysfs cannot
// tell, it stays on. Asked once; the answer never changes a byte.
bool eviction_helps();

// eviction_helps()'s test: whether the CPUs `cpus` all appear in the shared_cpu_list of the
// highest-level cache of the first of them, read under `root` (/sys/devices/system/cpu).
// False when a file is missing or unreadable.
bool share_last_level_cache(const std::string& root, const std::vector<int>& cpus);

}  // namespace maroon::verify
