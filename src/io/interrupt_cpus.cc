#include "io/interrupt_cpus.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace strata::io {
namespace fs = std::filesystem;
namespace {

bool ParseUnsigned(std::string_view s, std::uint64_t* out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && p == end && !s.empty();
}

std::string ReadSmallFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The interrupts of one device directory in /sys/devices and its parents:
// the first ancestor with MSI vectors, or else a legacy irq line.
void AddDeviceInterrupts(fs::path dev, std::set<unsigned>* irqs) {
  std::error_code ec;
  const fs::path root("/sys/devices");
  for (; !dev.empty() && dev != root && dev != dev.parent_path(); dev = dev.parent_path()) {
    if (fs::is_directory(dev / "msi_irqs", ec)) {
      for (const auto& e : fs::directory_iterator(dev / "msi_irqs", ec)) {
        std::uint64_t n = 0;
        if (ParseUnsigned(e.path().filename().string(), &n)) irqs->insert(static_cast<unsigned>(n));
      }
      return;
    }
    if (fs::is_regular_file(dev / "irq", ec)) {
      std::string text = ReadSmallFile(dev / "irq");
      while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
      std::uint64_t n = 0;
      if (ParseUnsigned(text, &n) && n > 0) {
        irqs->insert(static_cast<unsigned>(n));
        return;
      }
    }
  }
}

// A block device's directory in sysfs: its members for a stacked device
// (device-mapper, md), its disk for a partition, then the hardware.
void AddBlockDeviceInterrupts(const fs::path& block, int depth, std::set<unsigned>* irqs) {
  std::error_code ec;
  if (depth > 8) return;
  const fs::path slaves = block / "slaves";
  if (fs::is_directory(slaves, ec) && !fs::is_empty(slaves, ec)) {
    for (const auto& e : fs::directory_iterator(slaves, ec)) {
      AddBlockDeviceInterrupts(fs::canonical(e.path(), ec), depth + 1, irqs);
    }
    return;
  }
  fs::path disk = block;
  if (fs::exists(block / "partition", ec)) disk = block.parent_path();
  const fs::path device = fs::canonical(disk / "device", ec);
  if (ec) return;
  AddDeviceInterrupts(device, irqs);
}

}  // namespace

std::vector<unsigned> DeviceInterrupts(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  std::error_code ec;
  const fs::path block = fs::canonical(
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)),
      ec);
  if (ec) return {};
  std::set<unsigned> irqs;
  AddBlockDeviceInterrupts(block, 0, &irqs);
  return {irqs.begin(), irqs.end()};
}

std::map<unsigned, std::uint64_t> InterruptCountsPerCpu(std::string_view text,
                                                        std::span<const unsigned> irqs) {
  std::map<unsigned, std::uint64_t> counts;
  const std::set<unsigned> wanted(irqs.begin(), irqs.end());
  std::vector<unsigned> cpus;  // column -> cpu number, from the header
  std::istringstream in{std::string(text)};
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string w;
    if (header) {
      while (words >> w) {
        std::uint64_t n = 0;
        if (w.rfind("CPU", 0) == 0 && ParseUnsigned(std::string_view(w).substr(3), &n)) {
          cpus.push_back(static_cast<unsigned>(n));
        }
      }
      header = false;
      continue;
    }
    if (!(words >> w) || w.size() < 2 || w.back() != ':') continue;
    std::uint64_t irq = 0;
    if (!ParseUnsigned(std::string_view(w).substr(0, w.size() - 1), &irq)) continue;  // NMI:, LOC:, ...
    if (!wanted.contains(static_cast<unsigned>(irq))) continue;
    for (unsigned cpu : cpus) {
      std::uint64_t n = 0;
      if (!(words >> w) || !ParseUnsigned(w, &n)) break;
      counts[cpu] += n;
    }
  }
  return counts;
}

std::vector<unsigned> DeviceInterruptCpus(const std::string& path, double min_share) {
  const std::vector<unsigned> irqs = DeviceInterrupts(path);
  if (irqs.empty()) return {};
  const std::map<unsigned, std::uint64_t> counts =
      InterruptCountsPerCpu(ReadSmallFile("/proc/interrupts"), irqs);
  std::uint64_t total = 0;
  for (const auto& [cpu, n] : counts) total += n;
  std::vector<unsigned> out;
  if (total == 0) return out;
  for (const auto& [cpu, n] : counts) {
    if (static_cast<double>(n) >= min_share * static_cast<double>(total)) out.push_back(cpu);
  }
  return out;
}

}  // namespace strata::io
