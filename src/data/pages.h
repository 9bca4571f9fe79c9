// Memory advice for the large arrays a data set is loaded into.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace maroon::data {

// `n` bytes, every one written (zero) before return, in memory the kernel is asked to back with
// 2 MB pages where it can. Why: a training step gathers its batch from random rows of the
// images (128 rows of 784 bytes, each on another 4 KB page); on 4 KB pages each row is a TLB
// miss, and on a VM a miss walks two levels of page tables: 0.6-0.7 ms of a 7 ms MNIST MLP step
// on the 2-vCPU EPYC VM, against ~0.07 ms when the 47 MB of images sit in 23 huge pages. Fewer
// page faults when loading, too (one per 2 MB instead of one per 4 KB, ~11 us each there). The
// advice changes where the bytes live, never what they are.
std::vector<uint8_t> huge_page_buffer(size_t n);

}  // namespace maroon::data
