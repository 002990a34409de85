#include "search/edge_page_cache.h"

#include <algorithm>
#include <cstring>

namespace strata::search {
namespace {

constexpr std::size_t kLfuSample = 8;

std::uint64_t NextRandom(std::uint64_t* state) {  // splitmix64
  std::uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

EdgePageCache::EdgePageCache(std::size_t capacity, EdgeCachePolicy policy, std::uint64_t seed)
    : capacity_(std::max<std::size_t>(capacity, 8)),
      policy_(policy),
      window_capacity_(std::max<std::size_t>(1, capacity_ / 8)),
      bytes_(capacity_ * format::kSector),
      frames_(capacity_),
      rng_(seed) {
  free_frames_.reserve(capacity_);
  for (std::size_t f = capacity_; f > 0; --f) free_frames_.push_back(static_cast<std::uint32_t>(f - 1));
  resident_.reserve(capacity_);
  hand_ = order_.end();
}

std::size_t EdgePageCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return size_;
}
std::uint64_t EdgePageCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}
std::uint64_t EdgePageCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

void EdgePageCache::AddResident(std::uint32_t f) {
  frames_[f].resident_at = static_cast<std::uint32_t>(resident_.size());
  resident_.push_back(f);
}

void EdgePageCache::RemoveResident(std::uint32_t f) {
  const std::uint32_t i = frames_[f].resident_at;
  if (i == kNone) return;
  frames_[f].resident_at = kNone;
  if (i + 1 != resident_.size()) {
    resident_[i] = resident_.back();
    frames_[resident_[i]].resident_at = i;
  }
  resident_.pop_back();
}

std::uint32_t EdgePageCache::RandomResident() {
  return resident_[NextRandom(&rng_) % resident_.size()];
}

bool EdgePageCache::Lookup(std::uint32_t page, std::byte* out) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint32_t f = FrameOf(page);
  if (f == kNone) {
    ++misses_;
    return false;
  }
  ++hits_;
  Frame& e = frames_[f];
  std::memcpy(out, bytes_.data() + static_cast<std::size_t>(f) * format::kSector, format::kSector);
  switch (policy_) {
    case EdgeCachePolicy::kLru:
      order_.splice(order_.begin(), order_, e.order);
      break;
    case EdgeCachePolicy::kClock:
      e.referenced = true;
      break;
    case EdgeCachePolicy::kLfu:
      ++e.count;
      if (++accesses_since_decay_ >= 8 * capacity_) {
        // Aging: old popularity fades, so pages hot long ago can leave.
        for (Frame& frame : frames_) frame.count /= 2;
        accesses_since_decay_ = 0;
      }
      break;
    case EdgeCachePolicy::kNavis:
      if (e.in_window) {
        // Hit again while on probation: promoted to the main region.
        window_.erase(e.order);
        e.in_window = false;
        AddResident(f);
        if (resident_.size() > capacity_ - window_capacity_) {
          std::uint32_t victim = RandomResident();
          if (victim == f) victim = resident_[(e.resident_at + 1) % resident_.size()];
          Evict(victim);
        }
      }
      break;
  }
  return true;
}

void EdgePageCache::Evict(std::uint32_t f) {
  Frame& e = frames_[f];
  if (e.page == kNone) return;
  if (policy_ == EdgeCachePolicy::kNavis && e.in_window) {
    window_.erase(e.order);
  } else {
    RemoveResident(f);
    if (policy_ == EdgeCachePolicy::kLru || policy_ == EdgeCachePolicy::kClock) {
      if (hand_ == e.order) ++hand_;
      order_.erase(e.order);
    }
  }
  frame_of_[e.page] = kNone;
  e = Frame{};
  free_frames_.push_back(f);
  --size_;
}

std::uint32_t EdgePageCache::FreeFrame(bool for_window) {
  switch (policy_) {
    case EdgeCachePolicy::kNavis:
      if (for_window && window_.size() >= window_capacity_) Evict(window_.back());
      break;
    case EdgeCachePolicy::kLru:
      if (free_frames_.empty()) Evict(order_.back());
      break;
    case EdgeCachePolicy::kClock:
      while (free_frames_.empty()) {
        if (hand_ == order_.end()) hand_ = order_.begin();
        Frame& e = frames_[*hand_];
        if (e.referenced) {
          e.referenced = false;
          ++hand_;
        } else {
          Evict(*hand_);
        }
      }
      break;
    case EdgeCachePolicy::kLfu:
      if (free_frames_.empty()) {
        // The least used of a few random pages (sampled LFU, as Redis
        // approximates it): an exact minimum would cost a scan per miss.
        std::uint32_t victim = RandomResident();
        for (std::size_t i = 1; i < kLfuSample; ++i) {
          const std::uint32_t c = RandomResident();
          if (frames_[c].count < frames_[victim].count) victim = c;
        }
        Evict(victim);
      }
      break;
  }
  const std::uint32_t frame = free_frames_.back();
  free_frames_.pop_back();
  return frame;
}

void EdgePageCache::Invalidate(std::uint32_t page) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint32_t f = FrameOf(page);
  if (f != kNone) Evict(f);
}

std::uint32_t EdgePageCache::Heat(std::uint32_t page) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint32_t f = FrameOf(page);
  if (f == kNone) return 0;
  return policy_ == EdgeCachePolicy::kLfu ? std::max<std::uint32_t>(1, frames_[f].count) : 1;
}

std::uint32_t EdgePageCache::Peek(std::uint32_t page, std::byte* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint32_t f = FrameOf(page);
  if (f == kNone) return 0;
  std::memcpy(out, bytes_.data() + static_cast<std::size_t>(f) * format::kSector, format::kSector);
  return policy_ == EdgeCachePolicy::kLfu ? std::max<std::uint32_t>(1, frames_[f].count) : 1;
}

void EdgePageCache::Offer(std::uint32_t page, const std::byte* sector, std::uint32_t heat) {
  if (page == kNone) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (FrameOf(page) != kNone) return;  // another thread read it meanwhile
  if (page >= frame_of_.size()) {
    // Grown by an eighth past the page: the edge file grows by appends.
    frame_of_.resize(static_cast<std::size_t>(page) + 1 + page / 8, kNone);
  }
  const bool window = policy_ == EdgeCachePolicy::kNavis && heat == 0;
  if (policy_ == EdgeCachePolicy::kNavis && !window && resident_.size() >= capacity_ - window_capacity_) {
    Evict(RandomResident());  // the main region makes room, as for a promotion
  }
  const std::uint32_t f = FreeFrame(window);
  Frame& e = frames_[f];
  e.page = page;
  std::memcpy(bytes_.data() + static_cast<std::size_t>(f) * format::kSector, sector,
              format::kSector);
  switch (policy_) {
    case EdgeCachePolicy::kNavis:
      if (window) {
        window_.push_front(f);
        e.order = window_.begin();
        e.in_window = true;
      } else {
        AddResident(f);
      }
      break;
    case EdgeCachePolicy::kLru:
      order_.push_front(f);
      e.order = order_.begin();
      AddResident(f);
      break;
    case EdgeCachePolicy::kClock:
      // Behind the hand: the newest page is the last the sweep reaches.
      e.order = order_.insert(hand_, f);
      AddResident(f);
      break;
    case EdgeCachePolicy::kLfu:
      e.count = std::max<std::uint32_t>(1, heat);
      AddResident(f);
      break;
  }
  frame_of_[page] = f;
  ++size_;
}

}  // namespace strata::search
