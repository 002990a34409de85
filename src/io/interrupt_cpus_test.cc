#include "io/interrupt_cpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace strata::io {
namespace {

// Shaped like a 2-vCPU virtual machine's /proc/interrupts: a virtio disk
// whose request queue (36) interrupts CPU1 only.
constexpr const char* kTwoCpus =
    "           CPU0       CPU1       \n"
    "  0:         45          0   IO-APIC   2-edge      timer\n"
    " 35:          0          2  PCI-MSIX-0000:00:02.0   0-edge      virtio1-config\n"
    " 36:          0   16118298  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
    "NMI:          0          0   Non-maskable interrupts\n"
    "LOC:   12345678   23456789   Local timer interrupts\n";

TEST(InterruptCpus, SumsTheCountsOfTheGivenIrqsPerCpu) {
  const std::vector<unsigned> irqs{35, 36};
  const auto counts = InterruptCountsPerCpu(kTwoCpus, irqs);
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts.at(0), 0u);
  EXPECT_EQ(counts.at(1), 16118300u);
  EXPECT_TRUE(InterruptCountsPerCpu(kTwoCpus, std::vector<unsigned>{99}).empty());
}

TEST(InterruptCpus, FollowsTheHeaderWhenCpusAreNotContiguous) {
  // CPU1 offline: the columns are CPU0 and CPU2.
  const char* text =
      "   CPU0  CPU2\n"
      " 40:   7   993  PCI-MSI  nvme0q1\n"
      " 41:  junk\n";
  const auto counts = InterruptCountsPerCpu(text, std::vector<unsigned>{40, 41});
  EXPECT_EQ(counts.at(0), 7u);
  EXPECT_EQ(counts.at(2), 993u);
  EXPECT_FALSE(counts.contains(1));
}

TEST(InterruptCpus, UnknownPathsGiveNothing) {
  EXPECT_TRUE(DeviceInterrupts("/no/such/path").empty());
  EXPECT_TRUE(DeviceInterruptCpus("/no/such/path").empty());
  // /proc is not on a block device.
  EXPECT_TRUE(DeviceInterrupts("/proc/self").empty());
}

TEST(InterruptCpus, AnyCpusFoundForARealFileExist) {
  // Whatever this machine's disk is, the answer names CPUs it has (or is
  // empty where sysfs cannot tell).
  char tmpl[] = "/tmp/strata_irq_XXXXXX";
  const int fd = ::mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  const long ncpu = ::sysconf(_SC_NPROCESSORS_CONF);
  for (unsigned cpu : DeviceInterruptCpus(tmpl)) EXPECT_LT(cpu, static_cast<unsigned>(ncpu));
  ::close(fd);
  ::unlink(tmpl);
}

}  // namespace
}  // namespace strata::io
