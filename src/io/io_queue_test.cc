// The IoQueue contract, run identically against every engine.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "strata/io.h"

namespace strata {
namespace {

using testing_io::MatchesPattern;
using testing_io::ScratchDir;
using testing_io::WritePatternFile;

constexpr std::size_t kPage = kIoAlignment;

class IoQueueTest : public ::testing::TestWithParam<IoEngine> {
 protected:
  void SetUp() override {
    STRATA_REQUIRE_DIRECT_IO(dir_);
    Status probe = ProbeIoEngine(GetParam());
    if (!probe.ok()) GTEST_SKIP() << "engine unavailable here: " << probe.ToString();
  }

  std::unique_ptr<IoQueue> MakeQueue(std::uint32_t depth, bool register_files = true) {
    IoQueueOptions o;
    o.engine = GetParam();
    o.queue_depth = depth;
    o.register_files = register_files;
    Result<std::unique_ptr<IoQueue>> q = MakeIoQueue(o);
    EXPECT_TRUE(q.ok()) << q.status().ToString();
    return q.ok() ? std::move(q).value() : nullptr;
  }

  // A pattern file of `bytes` bytes, opened with O_DIRECT.
  DirectFile MakeFile(const std::string& name, std::size_t bytes) {
    const std::string path = dir_.File(name);
    EXPECT_TRUE(WritePatternFile(path, bytes));
    Result<DirectFile> f = DirectFile::Open(path);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : DirectFile();
  }

  // Collects completions until `count` requests have come back.
  std::vector<IoRequest*> Collect(IoQueue& q, std::size_t count) {
    std::vector<IoRequest*> all;
    std::vector<IoRequest*> done(q.queue_depth());
    while (all.size() < count) {
      Result<std::size_t> n = q.Wait(done, 1, 10'000'000);
      EXPECT_TRUE(n.ok()) << n.status().ToString();
      if (!n.ok() || *n == 0) break;
      all.insert(all.end(), done.begin(), done.begin() + static_cast<std::ptrdiff_t>(*n));
    }
    return all;
  }

  ScratchDir dir_;
};

TEST_P(IoQueueTest, ReportsItsEngine) {
  auto q = MakeQueue(8);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->engine(), GetParam());
  EXPECT_EQ(q->Describe().rfind(std::string(IoEngineName(GetParam())), 0), 0u) << q->Describe();
  EXPECT_EQ(q->queue_depth(), 8u);
  EXPECT_EQ(q->capacity(), 8u);
}

TEST_P(IoQueueTest, RandomReadsReturnExactlyTheBytesWritten) {
  constexpr std::size_t kPages = 512;
  DirectFile file = MakeFile("data", kPages * kPage);
  auto q = MakeQueue(16);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(16, 4 * kPage);
  ASSERT_TRUE(pool.ok());
  ASSERT_TRUE(q->RegisterBuffers(pool->region()).ok());
  Result<IoFileId> id = q->AddFile(file);
  ASSERT_TRUE(id.ok()) << id.status().ToString();

  std::mt19937_64 rng(7);
  std::vector<IoRequest> reqs(16);
  std::vector<IoRequest*> done(16);
  auto refill = [&](IoRequest& r) {
    const std::uint32_t pages = 1 + static_cast<std::uint32_t>(rng() % 4);
    r.file = *id;
    r.length = pages * kPage;
    r.offset = (rng() % (kPages - pages + 1)) * kPage;
    std::memset(r.buffer, 0, r.length);
  };
  for (IoRequest& r : reqs) {
    r.buffer = pool->Acquire();
    refill(r);
    ASSERT_TRUE(q->Submit(&r).ok());
  }
  std::size_t checked = 0;
  while (checked < 2000) {
    Result<std::size_t> n = q->Wait(done, 1);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_GT(*n, 0u);
    for (std::size_t i = 0; i < *n; ++i) {
      IoRequest& r = *done[i];
      ASSERT_TRUE(r.status.ok()) << r.status.ToString();
      ASSERT_EQ(r.bytes_transferred, r.length);
      ASSERT_TRUE(MatchesPattern(r.buffer, r.offset, r.length)) << "offset " << r.offset;
      ++checked;
      refill(r);
      ASSERT_TRUE(q->Submit(&r).ok());
    }
  }
  EXPECT_EQ(Collect(*q, 16).size(), 16u);
  EXPECT_EQ(q->in_flight(), 0u);
  EXPECT_EQ(q->stats().errors, 0u);
}

TEST_P(IoQueueTest, ManyInFlightEachLandInTheirOwnBuffer) {
  constexpr std::uint32_t kDepth = 64;
  DirectFile file = MakeFile("data", 1024 * kPage);
  auto q = MakeQueue(kDepth);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(kDepth, kPage);
  ASSERT_TRUE(pool.ok());
  ASSERT_TRUE(q->RegisterBuffers(pool->region()).ok());
  IoFileId id = *q->AddFile(file);
  std::vector<IoRequest> reqs(kDepth);
  std::vector<IoRequest*> ptrs;
  for (std::uint32_t i = 0; i < kDepth; ++i) {
    // Descending, scattered offsets so completion order has no reason to
    // follow submission order.
    reqs[i] = IoRequest{.file = id,
                        .offset = ((kDepth - i) * 13 % 1024) * kPage,
                        .length = kPage,
                        .buffer = pool->Acquire(),
                        .tag = i};
    ptrs.push_back(&reqs[i]);
  }
  ASSERT_TRUE(q->Submit(ptrs).ok());  // one batch
  EXPECT_EQ(q->in_flight(), kDepth);
  EXPECT_EQ(q->capacity(), 0u);
  // Non-blocking polls first (may return nothing), then blocking waits.
  std::vector<IoRequest*> got;
  std::vector<IoRequest*> done(kDepth);
  Result<std::size_t> polled = q->Poll(done);
  ASSERT_TRUE(polled.ok());
  got.insert(got.end(), done.begin(), done.begin() + static_cast<std::ptrdiff_t>(*polled));
  std::vector<IoRequest*> rest = Collect(*q, kDepth - got.size());
  got.insert(got.end(), rest.begin(), rest.end());
  ASSERT_EQ(got.size(), kDepth);
  std::set<std::uint64_t> tags;
  for (IoRequest* r : got) {
    ASSERT_TRUE(r->status.ok()) << r->status.ToString();
    EXPECT_EQ(r, &reqs[r->tag]);
    EXPECT_TRUE(MatchesPattern(r->buffer, r->offset, kPage)) << "tag " << r->tag;
    tags.insert(r->tag);
  }
  EXPECT_EQ(tags.size(), kDepth);
  const IoStats& s = q->stats();
  EXPECT_EQ(s.reads, kDepth);
  EXPECT_EQ(s.bytes_read, kDepth * kPage);
  EXPECT_EQ(s.pages_read, kDepth);
  EXPECT_EQ(s.max_in_flight, kDepth);
  EXPECT_EQ(s.submit_batches, 1u);
  EXPECT_EQ(s.errors, 0u);
}

TEST_P(IoQueueTest, PollEventuallySeesCompletionsWithoutWaiting) {
  DirectFile file = MakeFile("data", 16 * kPage);
  auto q = MakeQueue(4);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(1, kPage);
  IoRequest r{
      .file = *q->AddFile(file), .offset = 3 * kPage, .length = kPage, .buffer = pool->Acquire()};
  ASSERT_TRUE(q->Submit(&r).ok());
  IoRequest* done[1];
  std::size_t n = 0;
  for (int i = 0; i < 2'000'000 && n == 0; ++i) {
    Result<std::size_t> got = q->Poll(done);
    ASSERT_TRUE(got.ok());
    n = *got;
    if (n == 0) ::usleep(5);
  }
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(done[0], &r);
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(MatchesPattern(r.buffer, r.offset, kPage));
  EXPECT_EQ(q->stats().wait_ns, 0u);  // Poll never counts as waiting
}

TEST_P(IoQueueTest, RejectsUnalignedOrMalformedRequests) {
  DirectFile file = MakeFile("data", 16 * kPage);
  auto q = MakeQueue(8);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(2, 2 * kPage);
  IoFileId id = *q->AddFile(file);
  std::byte* buf = pool->Acquire();
  const IoRequest good{.file = id, .offset = 0, .length = kPage, .buffer = buf};
  struct Case {
    IoRequest req;
    const char* needle;
  };
  std::vector<Case> cases = {
      {IoRequest{.file = id, .offset = 100, .length = kPage, .buffer = buf}, "offset 100"},
      {IoRequest{.file = id, .offset = 0, .length = 1000, .buffer = buf}, "length 1000"},
      {IoRequest{.file = id, .offset = 0, .length = 0, .buffer = buf}, "length 0"},
      {IoRequest{.file = id, .offset = 0, .length = kPage, .buffer = buf + 512}, "aligned"},
      {IoRequest{.file = id, .offset = 0, .length = kPage, .buffer = nullptr}, "aligned"},
      {IoRequest{.file = id + 5, .offset = 0, .length = kPage, .buffer = buf}, "file id"},
  };
  for (Case& c : cases) {
    IoRequest ok_req = good;
    IoRequest* batch[2] = {&ok_req, &c.req};  // the bad one second: nothing may be issued
    Status s = q->Submit(batch);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find(c.needle), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("IoRequest[1]"), std::string::npos) << s.message();
    EXPECT_EQ(q->in_flight(), 0u);
  }
  EXPECT_EQ(q->stats().reads, 0u);
  EXPECT_EQ(q->stats().submit_batches, 0u);
}

TEST_P(IoQueueTest, BusyBeyondQueueDepthAndNothingSubmitted) {
  DirectFile file = MakeFile("data", 16 * kPage);
  auto q = MakeQueue(4);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(5, kPage);
  IoFileId id = *q->AddFile(file);
  std::vector<IoRequest> reqs(5);
  std::vector<IoRequest*> ptrs;
  for (std::uint32_t i = 0; i < 5; ++i) {
    reqs[i] =
        IoRequest{.file = id, .offset = i * kPage, .length = kPage, .buffer = pool->Acquire()};
    ptrs.push_back(&reqs[i]);
  }
  EXPECT_EQ(q->Submit(ptrs).code(), StatusCode::kBusy);
  EXPECT_EQ(q->in_flight(), 0u);
  ASSERT_TRUE(q->Submit(std::span(ptrs).first(4)).ok());
  EXPECT_EQ(q->Submit(ptrs[4]).code(), StatusCode::kBusy);
  EXPECT_EQ(Collect(*q, 4).size(), 4u);
  ASSERT_TRUE(q->Submit(ptrs[4]).ok());
  ASSERT_EQ(Collect(*q, 1).size(), 1u);
  EXPECT_TRUE(MatchesPattern(reqs[4].buffer, 4 * kPage, kPage));
}

TEST_P(IoQueueTest, ReadPastEndOfFileIsReportedNotZeroFilled) {
  // 10 full pages and 100 bytes of an 11th.
  DirectFile file = MakeFile("short", 10 * kPage + 100);
  auto q = MakeQueue(4);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(3, 4 * kPage);
  IoFileId id = *q->AddFile(file);
  IoRequest inside{.file = id, .offset = 6 * kPage, .length = 4 * kPage, .buffer = pool->Acquire()};
  IoRequest straddle{
      .file = id, .offset = 8 * kPage, .length = 4 * kPage, .buffer = pool->Acquire()};
  IoRequest beyond{.file = id, .offset = 12 * kPage, .length = kPage, .buffer = pool->Acquire()};
  IoRequest* batch[3] = {&inside, &straddle, &beyond};
  ASSERT_TRUE(q->Submit(batch).ok());
  ASSERT_EQ(Collect(*q, 3).size(), 3u);
  EXPECT_TRUE(inside.status.ok()) << inside.status.ToString();
  EXPECT_TRUE(MatchesPattern(inside.buffer, inside.offset, inside.length));

  EXPECT_TRUE(straddle.status.IsOutOfRange()) << straddle.status.ToString();
  EXPECT_NE(straddle.status.message().find("end of file"), std::string::npos);
  EXPECT_EQ(straddle.bytes_transferred, 2 * kPage + 100);
  EXPECT_TRUE(MatchesPattern(straddle.buffer, straddle.offset, 2 * kPage + 100));
  // What the buffer holds past bytes_transferred is unspecified (the kernel
  // may zero it); the request's status is what tells the caller.

  EXPECT_TRUE(beyond.status.IsOutOfRange()) << beyond.status.ToString();
  EXPECT_EQ(beyond.bytes_transferred, 0u);
  EXPECT_EQ(q->stats().errors, 2u);
}

TEST_P(IoQueueTest, IoErrorOnClosedDescriptorReachesCallerAsStatus) {
  const std::string path = dir_.File("data");
  ASSERT_TRUE(WritePatternFile(path, 4 * kPage));
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  // Plain descriptors: a registered io_uring file would keep the file alive.
  auto q = MakeQueue(4, /*register_files=*/false);
  ASSERT_NE(q, nullptr);
  Result<IoFileId> id = q->AddFile(fd, path);
  ASSERT_TRUE(id.ok());
  ::close(fd);
  Result<BufferPool> pool = BufferPool::Create(1, kPage);
  IoRequest r{.file = *id, .offset = 0, .length = kPage, .buffer = pool->Acquire()};
  ASSERT_TRUE(q->Submit(&r).ok());
  ASSERT_EQ(Collect(*q, 1).size(), 1u);
  EXPECT_TRUE(r.status.IsIOError()) << r.status.ToString();
  EXPECT_NE(r.status.message().find("Bad file descriptor"), std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find(path), std::string::npos) << r.status.message();
  EXPECT_EQ(q->stats().errors, 1u);

  // Adding a descriptor that is already closed fails up front.
  Result<IoFileId> closed = q->AddFile(fd, path);
  EXPECT_TRUE(closed.status().IsInvalidArgument()) << closed.status().ToString();
  EXPECT_TRUE(q->AddFile(-1).status().IsInvalidArgument());
}

TEST_P(IoQueueTest, WritesThroughTheQueueReadBack) {
  const std::string path = dir_.File("rw");
  ASSERT_TRUE(WritePatternFile(path, 32 * kPage));
  Result<DirectFile> file = DirectFile::Open(path, DirectFileMode::kReadWrite);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto q = MakeQueue(8);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(8, kPage);
  ASSERT_TRUE(q->RegisterBuffers(pool->region()).ok());
  IoFileId id = *q->AddFile(*file);
  std::vector<IoRequest> writes(4);
  std::vector<IoRequest*> ptrs;
  for (std::uint32_t i = 0; i < 4; ++i) {
    writes[i] = IoRequest{.op = IoOp::kWrite,
                          .file = id,
                          .offset = (5 + 7 * i) * kPage,
                          .length = kPage,
                          .buffer = pool->Acquire()};
    std::memset(writes[i].buffer, 0x30 + static_cast<int>(i), kPage);
    ptrs.push_back(&writes[i]);
  }
  ASSERT_TRUE(q->RunToCompletion(ptrs).ok());
  EXPECT_EQ(q->stats().writes, 4u);
  EXPECT_EQ(q->stats().pages_written, 4u);
  for (std::uint32_t i = 0; i < 4; ++i) {
    IoRequest rd{
        .file = id, .offset = writes[i].offset, .length = kPage, .buffer = pool->Acquire()};
    ASSERT_TRUE(q->RunToCompletion(std::span<IoRequest* const>(std::vector<IoRequest*>{&rd})).ok());
    for (std::size_t b = 0; b < kPage; ++b) {
      ASSERT_EQ(rd.buffer[b], static_cast<std::byte>(0x30 + i));
    }
    ASSERT_TRUE(pool->Release(rd.buffer).ok());
  }
  // Untouched pages keep their pattern.
  IoRequest rd{.file = id, .offset = 6 * kPage, .length = kPage, .buffer = pool->Acquire()};
  IoRequest* one[1] = {&rd};
  ASSERT_TRUE(q->RunToCompletion(one).ok());
  EXPECT_TRUE(MatchesPattern(rd.buffer, rd.offset, kPage));
}

TEST_P(IoQueueTest, RunToCompletionChunksByDepthAndReportsFirstError) {
  DirectFile file = MakeFile("data", 64 * kPage);
  auto q = MakeQueue(4);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(20, kPage);
  IoFileId id = *q->AddFile(file);
  std::vector<IoRequest> reqs(20);
  std::vector<IoRequest*> ptrs;
  for (std::uint32_t i = 0; i < 20; ++i) {
    reqs[i] = IoRequest{
        .file = id, .offset = (i * 3 % 64) * kPage, .length = kPage, .buffer = pool->Acquire()};
    ptrs.push_back(&reqs[i]);
  }
  ASSERT_TRUE(q->RunToCompletion(ptrs).ok());
  for (const IoRequest& r : reqs) EXPECT_TRUE(MatchesPattern(r.buffer, r.offset, kPage));
  EXPECT_LE(q->stats().max_in_flight, 4u);
  EXPECT_EQ(q->in_flight(), 0u);

  reqs[13].offset = 100 * kPage;  // past the end
  Status s = q->RunToCompletion(ptrs);
  EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
  EXPECT_TRUE(reqs[12].status.ok());
  EXPECT_TRUE(reqs[14].status.ok());
  EXPECT_EQ(q->in_flight(), 0u);

  reqs[13].offset = 7;  // invalid: rejected before anything is issued
  const std::uint64_t reads_before = q->stats().reads;
  EXPECT_TRUE(q->RunToCompletion(ptrs).IsInvalidArgument());
  EXPECT_EQ(q->stats().reads, reads_before);
}

TEST_P(IoQueueTest, FilesAreAddedAndRemovedBySlot) {
  DirectFile a = MakeFile("a", 8 * kPage);
  DirectFile b = MakeFile("b", 16 * kPage);
  IoQueueOptions o{.engine = GetParam(), .queue_depth = 4, .max_files = 2};
  Result<std::unique_ptr<IoQueue>> made = MakeIoQueue(o);
  ASSERT_TRUE(made.ok());
  IoQueue& q = **made;
  IoFileId ia = *q.AddFile(a);
  IoFileId ib = *q.AddFile(b);
  EXPECT_NE(ia, ib);
  EXPECT_EQ(q.AddFile(a).status().code(), StatusCode::kBusy);  // both slots used

  Result<BufferPool> pool = BufferPool::Create(2, kPage);
  IoRequest ra{.file = ia, .offset = 7 * kPage, .length = kPage, .buffer = pool->Acquire()};
  IoRequest rb{.file = ib, .offset = 15 * kPage, .length = kPage, .buffer = pool->Acquire()};
  IoRequest* both[2] = {&ra, &rb};
  ASSERT_TRUE(q.Submit(both).ok());
  EXPECT_EQ(q.RemoveFile(ia).code(), StatusCode::kBusy);  // a request on it is in flight
  ASSERT_EQ(Collect(q, 2).size(), 2u);
  EXPECT_TRUE(ra.status.ok());
  EXPECT_TRUE(rb.status.ok());  // 16-page file: page 15 exists
  ASSERT_TRUE(q.RemoveFile(ia).ok());
  EXPECT_TRUE(q.RemoveFile(ia).IsInvalidArgument());
  EXPECT_TRUE(q.Submit(&ra).IsInvalidArgument());  // slot is gone
  Result<IoFileId> again = q.AddFile(a);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, ia);  // the freed slot is reused
  ra.file = *again;
  IoRequest* one[1] = {&ra};
  EXPECT_TRUE(q.RunToCompletion(one).ok());
}

TEST_P(IoQueueTest, WaitWithNothingInFlightReturnsAtOnce) {
  auto q = MakeQueue(4);
  ASSERT_NE(q, nullptr);
  std::vector<IoRequest*> done(4);
  Result<std::size_t> n = q->Wait(done, 4);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
  Result<std::size_t> p = q->Poll(done);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, 0u);
}

TEST_P(IoQueueTest, WaitClampsMinimumAndHonoursTimeout) {
  DirectFile file = MakeFile("data", 8 * kPage);
  auto q = MakeQueue(8);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(2, kPage);
  IoFileId id = *q->AddFile(file);
  IoRequest r1{.file = id, .offset = 0, .length = kPage, .buffer = pool->Acquire()};
  IoRequest r2{.file = id, .offset = kPage, .length = kPage, .buffer = pool->Acquire()};
  IoRequest* batch[2] = {&r1, &r2};
  ASSERT_TRUE(q->Submit(batch).ok());
  std::vector<IoRequest*> done(8);
  std::size_t got = 0;
  // Asking for 8 with 2 in flight waits for the 2, not forever.
  while (got < 2) {
    Result<std::size_t> n = q->Wait(done, 8, 10'000'000);
    ASSERT_TRUE(n.ok());
    ASSERT_GT(*n, 0u);
    got += *n;
  }
  EXPECT_EQ(q->in_flight(), 0u);
  EXPECT_GT(q->stats().wait_ns, 0u);
}

TEST_P(IoQueueTest, StatsResetGivesPerQueryWindows) {
  DirectFile file = MakeFile("data", 8 * kPage);
  auto q = MakeQueue(4);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> pool = BufferPool::Create(1, 2 * kPage);
  IoRequest r{
      .file = *q->AddFile(file), .offset = 0, .length = 2 * kPage, .buffer = pool->Acquire()};
  IoRequest* one[1] = {&r};
  ASSERT_TRUE(q->RunToCompletion(one).ok());
  ASSERT_TRUE(q->RunToCompletion(one).ok());
  IoStats first = q->ResetStats();
  EXPECT_EQ(first.reads, 2u);
  EXPECT_EQ(first.pages_read, 4u);
  EXPECT_EQ(first.bytes_read, 4 * kPage);
  EXPECT_EQ(q->stats().reads, 0u);
  EXPECT_EQ(q->stats().max_in_flight, 0u);
  ASSERT_TRUE(q->RunToCompletion(one).ok());
  IoStats second = q->ResetStats();
  EXPECT_EQ(second.reads, 1u);
  IoStats total = first;
  total.Merge(second);
  EXPECT_EQ(total.reads, 3u);
  EXPECT_EQ(total.pages_read, 6u);
  EXPECT_EQ(total.max_in_flight, 1u);
}

TEST_P(IoQueueTest, DestroyingAQueueWaitsForReadsInFlight) {
  DirectFile file = MakeFile("data", 256 * kPage);
  Result<BufferPool> pool = BufferPool::Create(32, kPage);
  std::vector<IoRequest> reqs(32);
  {
    auto q = MakeQueue(32);
    ASSERT_NE(q, nullptr);
    IoFileId id = *q->AddFile(file);
    std::vector<IoRequest*> ptrs;
    for (std::uint32_t i = 0; i < 32; ++i) {
      reqs[i] = IoRequest{
          .file = id, .offset = i * 7 * kPage, .length = kPage, .buffer = pool->Acquire()};
      ptrs.push_back(&reqs[i]);
    }
    ASSERT_TRUE(q->Submit(ptrs).ok());
  }  // no Wait: the destructor must drain
  for (const IoRequest& r : reqs) {
    EXPECT_TRUE(r.status.ok());
    EXPECT_TRUE(MatchesPattern(r.buffer, r.offset, kPage));
  }
}

TEST_P(IoQueueTest, BuffersOutsideTheRegisteredRegionStillWork) {
  DirectFile file = MakeFile("data", 64 * kPage);
  auto q = MakeQueue(8);
  ASSERT_NE(q, nullptr);
  Result<BufferPool> registered = BufferPool::Create(4, kPage);
  Result<BufferPool> other = BufferPool::Create(4, kPage);
  ASSERT_TRUE(q->RegisterBuffers(registered->region()).ok());
  // io_uring pins the 16 KiB region (well under any RLIMIT_MEMLOCK); the
  // other engines have no such mechanism.
  EXPECT_EQ(q->buffers_registered(), GetParam() == IoEngine::kUring) << q->Describe();
  IoFileId id = *q->AddFile(file);
  std::vector<IoRequest> reqs(8);
  std::vector<IoRequest*> ptrs;
  for (std::uint32_t i = 0; i < 8; ++i) {
    reqs[i] = IoRequest{.file = id,
                        .offset = (60 - i) * kPage,
                        .length = kPage,
                        .buffer = i % 2 ? registered->Acquire() : other->Acquire()};
    ptrs.push_back(&reqs[i]);
  }
  ASSERT_TRUE(q->RunToCompletion(ptrs).ok());
  for (const IoRequest& r : reqs) EXPECT_TRUE(MatchesPattern(r.buffer, r.offset, kPage));
  // Re-registering needs an idle queue; an unaligned region is refused.
  EXPECT_TRUE(q->RegisterBuffers(other->region()).ok());
  EXPECT_TRUE(q->RegisterBuffers(other->region().subspan(8)).IsInvalidArgument());
  EXPECT_TRUE(q->RegisterBuffers({}).ok());
  EXPECT_FALSE(q->buffers_registered());
}

INSTANTIATE_TEST_SUITE_P(Engines, IoQueueTest,
                         ::testing::Values(IoEngine::kUring, IoEngine::kAio, IoEngine::kPread),
                         [](const ::testing::TestParamInfo<IoEngine>& info) {
                           return std::string(IoEngineName(info.param));
                         });

TEST(IoQueueFactory, AutoPicksTheFirstAvailableEngine) {
  Result<std::unique_ptr<IoQueue>> q = MakeIoQueue({.engine = IoEngine::kAuto});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  IoEngine expected = IoEngine::kPread;
  if (ProbeIoEngine(IoEngine::kUring).ok()) {
    expected = IoEngine::kUring;
  } else if (ProbeIoEngine(IoEngine::kAio).ok()) {
    expected = IoEngine::kAio;
  }
  EXPECT_EQ((*q)->engine(), expected);
  EXPECT_TRUE(ProbeIoEngine(IoEngine::kPread).ok());
  EXPECT_TRUE(ProbeIoEngine(IoEngine::kAuto).IsInvalidArgument());
}

TEST(IoQueueFactory, RejectsBadOptions) {
  EXPECT_TRUE(MakeIoQueue({.queue_depth = 0}).status().IsInvalidArgument());
  EXPECT_TRUE(MakeIoQueue({.queue_depth = 5000}).status().IsInvalidArgument());
  EXPECT_TRUE(MakeIoQueue({.max_files = 0}).status().IsInvalidArgument());
  EXPECT_TRUE(MakeIoQueue({.pread_threads = 1000}).status().IsInvalidArgument());
  Status s = IoQueueOptions{.queue_depth = 0}.Validate();
  EXPECT_NE(s.message().find("queue_depth"), std::string::npos);
}

TEST(IoEngineNames, ParseAndPrintRoundTrip) {
  for (IoEngine e : {IoEngine::kAuto, IoEngine::kUring, IoEngine::kAio, IoEngine::kPread}) {
    Result<IoEngine> parsed = ParseIoEngine(IoEngineName(e));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, e);
  }
  EXPECT_EQ(*ParseIoEngine("io_uring"), IoEngine::kUring);
  EXPECT_EQ(*ParseIoEngine("libaio"), IoEngine::kAio);
  EXPECT_TRUE(ParseIoEngine("mmap").status().IsInvalidArgument());
  EXPECT_NE(ParseIoEngine("mmap").status().message().find("uring"), std::string::npos);

  Result<std::vector<IoEngine>> all = ParseIoEngineList("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<IoEngine>{IoEngine::kUring, IoEngine::kAio, IoEngine::kPread}));
  Result<std::vector<IoEngine>> two = ParseIoEngineList("pread,uring");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(*two, (std::vector<IoEngine>{IoEngine::kPread, IoEngine::kUring}));
  EXPECT_TRUE(ParseIoEngineList("uring,,aio").status().IsInvalidArgument());
  EXPECT_TRUE(ParseIoEngineList("uring,io_uring").status().IsInvalidArgument());
  EXPECT_TRUE(ParseIoEngineList("").status().IsInvalidArgument());
}

}  // namespace
}  // namespace strata
