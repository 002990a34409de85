// Which CPUs service the interrupts of the storage device that holds a file.
//
// Why it matters: on a virtual machine whose disk has one request queue
// (virtio-blk as most clouds expose it), every completion interrupt lands on
// one vCPU. Measured on our 2-vCPU VM (bench/results/collection_synth1m.md,
// "During a merge"): any CPU-bound thread on that vCPU, even at SCHED_IDLE,
// cut 4 KiB O_DIRECT reads at queue depth 8 from ~50k/s to ~2.8k/s (2.8 ms
// each: the hypervisor's slice), while the same thread on the other vCPU cost
// nothing. Background work (merges, the pending-graph indexer) therefore
// keeps off those CPUs when others are left (base/thread_affinity.h).
//
// The device is found through sysfs: the block device of the file
// (partitions to their disk, device-mapper and md to their members), up the
// device tree to the PCI function with MSI vectors (or a legacy irq), and
// those interrupts' per-CPU counts in /proc/interrupts. A device with a queue
// per CPU (NVMe on bare metal) spreads its interrupts over every CPU, and
// then every CPU is returned: nothing to avoid.
#ifndef STRATA_IO_INTERRUPT_CPUS_H_
#define STRATA_IO_INTERRUPT_CPUS_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::io {

// The interrupt numbers of the storage device holding `path` (empty when it
// cannot be told: tmpfs, no sysfs, a device without PCI interrupts).
std::vector<unsigned> DeviceInterrupts(const std::string& path);

// Per-CPU counts of `irqs` summed, from the text of /proc/interrupts:
// cpu number -> count. Unknown irqs are ignored; malformed lines skipped.
std::map<unsigned, std::uint64_t> InterruptCountsPerCpu(std::string_view proc_interrupts,
                                                        std::span<const unsigned> irqs);

// The CPUs that handled at least `min_share` of the interrupts of the
// device holding `path`, in increasing order (empty when unknown or when the
// device has had no interrupts yet).
std::vector<unsigned> DeviceInterruptCpus(const std::string& path, double min_share = 0.1);

}  // namespace strata::io

#endif  // STRATA_IO_INTERRUPT_CPUS_H_
