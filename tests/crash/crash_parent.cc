// The parent role of collection_crash_harness (crash_parent.h): the kill
// plans, the round loop and reading the child's pipe.
#include "crash_parent.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include "crash_common.h"
#include "crash_model.h"
#include "crash_verify.h"

extern char** environ;

namespace strata::crash {
namespace {

namespace fs = std::filesystem;

constexpr int kChildFd = 100;  // the pipe's write end in the child
// Marks a scratch directory as this harness's: --dir is wiped at the start
// only when it holds this file (or is empty).
constexpr char kMarker[] = ".collection_crash_harness";

// When a round kills the child (crash_harness.cc lists them).
enum class KillPlan { kTime, kAtIntent, kDuringMerge, kFirstBuild };

const char* KillPlanName(KillPlan p) {
  switch (p) {
    case KillPlan::kTime:
      return "time";
    case KillPlan::kAtIntent:
      return "intent";
    case KillPlan::kDuringMerge:
      return "merge";
    case KillPlan::kFirstBuild:
      return "first-build";
  }
  return "?";
}

// What one round saw on the pipe.
struct ChildRun {
  bool opened = false;
  std::uint64_t acked = 0;
  std::optional<Batch> in_flight;
  std::uint64_t max_batch = 0;
  std::uint64_t index_version = 0;
  bool merging = false;
  std::uint64_t merges_seen = 0;
  std::vector<std::string> errors;   // E lines
  std::vector<std::string> failure;  // F lines
  bool closed = false;
  std::string last_line;
};

// Reads complete lines from `fd` into `lines`; false at EOF.
bool ReadLines(int fd, std::string* buf, std::vector<std::string>* lines) {
  char tmp[65536];
  const ssize_t n = ::read(fd, tmp, sizeof tmp);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  buf->append(tmp, static_cast<std::size_t>(n));
  std::size_t start = 0, nl;
  while ((nl = buf->find('\n', start)) != std::string::npos) {
    lines->push_back(buf->substr(start, nl - start));
    start = nl + 1;
  }
  buf->erase(0, start);
  return true;
}

class Harness {
 public:
  explicit Harness(ParentArgs a) : a_(std::move(a)), rng_(a_.seed) {}

  int Run() {
    if (Status s = Prepare(); !s.ok()) {
      std::fprintf(stderr, "collection_crash_harness: %s\n", s.ToString().c_str());
      return 2;
    }
    std::printf(
        "collection_crash_harness: dir %s, %d kills, seed %llu, durability %s, update mode %s, "
        "dim %u, flat_threshold %llu, merge_pending_count %llu, live cap %zu\n",
        a_.dir.c_str(), a_.kills, static_cast<unsigned long long>(a_.seed),
        std::string(DurabilityName(a_.durability)).c_str(),
        std::string(UpdateModeName(a_.update_mode)).c_str(), kDim,
        static_cast<unsigned long long>(kFlatThreshold),
        static_cast<unsigned long long>(kMergePendingCount), kMaxLive);
    std::fflush(stdout);
    int passed = 0, failed = 0;
    bool fatal = false;
    for (int round = 1; round <= a_.kills; ++round) {
      if (fatal) {
        ++failed;
        std::printf("round %d/%d: SKIPPED (the collection no longer opens)\n", round, a_.kills);
        continue;
      }
      if (a_.fresh_every > 0 && round > 1 && (round - 1) % a_.fresh_every == 0) StartFresh();
      const RoundResult r = RunRound(round);
      if (r.ok) {
        ++passed;
      } else {
        ++failed;
        fatal = r.fatal;
      }
      std::fflush(stdout);
    }
    if (!fatal && failed == 0) CompareWithCleanBuild(&failed, &passed);
    if (failed == 0 && !a_.keep) {
      std::error_code ec;
      fs::remove_all(a_.dir, ec);
    } else if (failed > 0) {
      std::printf("collections kept for inspection in %s\n", a_.dir.c_str());
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
  }

 private:
  struct RoundResult {
    bool ok = true;
    bool fatal = false;
  };

  std::string coll_dir() const { return a_.dir + "/coll" + std::to_string(generation_); }
  std::string state_path() const { return a_.dir + "/model.txt"; }

  Status Prepare() {
    std::error_code ec;
    if (fs::exists(a_.dir)) {
      const bool ours = fs::exists(a_.dir + "/" + kMarker);
      if (!ours && !fs::is_empty(a_.dir, ec)) {
        return Status::InvalidArgument("--dir " + a_.dir +
                                       " exists, is not empty and was not made by this harness");
      }
      fs::remove_all(a_.dir, ec);
    }
    fs::create_directories(a_.dir, ec);
    if (ec) return Status::IOError("mkdir " + a_.dir + ": " + ec.message());
    std::ofstream(a_.dir + "/" + kMarker) << "collection_crash_harness scratch directory\n";
    return Status::OK();
  }

  void StartFresh() {
    ++generation_;
    const std::uint64_t next_batch = model_.next_batch;
    model_ = Model{};
    model_.next_batch = next_batch;  // batch numbers stay unique across collections
    indexed_ = false;
    std::printf("-- fresh collection %s\n", coll_dir().c_str());
  }

  KillPlan ChoosePlan() {
    const unsigned r = rng_() % 100;
    if (!indexed_ && model_.live.size() < kFlatThreshold && r < 75) return KillPlan::kFirstBuild;
    if (r < 45) return KillPlan::kTime;
    if (r < 70) return KillPlan::kAtIntent;
    return KillPlan::kDuringMerge;
  }

  double LogUniformMs(double lo, double hi) {
    std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
    return std::exp(u(rng_));
  }

  RoundResult RunRound(int round) {
    RoundResult result;
    const std::uint64_t child_seed = Mix(a_.seed * 1000003 + round);
    if (Status s = SaveModel(model_, state_path()); !s.ok()) {
      std::printf("round %d/%d: FAILED: %s\n", round, a_.kills, s.ToString().c_str());
      return {false, true};
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      std::printf("round %d/%d: FAILED: pipe: %s\n", round, a_.kills, std::strerror(errno));
      return {false, true};
    }
    std::vector<std::string> args = {"/proc/self/exe",
                                     "--child",
                                     coll_dir(),
                                     "--state",
                                     state_path(),
                                     "--seed",
                                     std::to_string(child_seed),
                                     "--fd",
                                     std::to_string(kChildFd),
                                     "--durability",
                                     std::string(DurabilityName(a_.durability)),
                                     "--update-mode",
                                     std::string(UpdateModeName(a_.update_mode))};
    // Every 10th round the child starts with a drain (see RunChild), so
    // that even a short run rebuilds versions from few vectors (rounds 20,
    // 40, ...) or none (rounds 10, 30, ...).
    const bool drain = round % 10 == 0;
    if (drain) {
      args.push_back("--drain");
      args.push_back(std::to_string(round % 20 == 10 ? 0 : 1 + rng_() % 199));
    }
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], kChildFd);
    pid_t pid = -1;
    const auto t0 = Clock::now();
    const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      std::printf("round %d/%d: FAILED: posix_spawn: %s\n", round, a_.kills, std::strerror(rc));
      return {false, true};
    }

    // The kill plan: a time, or an event plus a short delay.
    // A drain round is killed around the Merge() that ends the drain.
    KillPlan plan = ChoosePlan();
    if (drain) plan = KillPlan::kDuringMerge;
    const double delay_ms = LogUniformMs(a_.min_delay_ms, a_.max_delay_ms);
    Clock::time_point deadline = t0 + std::chrono::microseconds(static_cast<long>(delay_ms * 1e3));
    const std::uint64_t intent_target = 1 + rng_() % 150;
    std::uint64_t intents = 0;
    bool triggered = plan == KillPlan::kTime;
    if (!triggered) deadline = t0 + std::chrono::milliseconds(2500);  // fallback
    std::string trigger = plan == KillPlan::kTime ? "t=" + std::to_string(delay_ms) + "ms" : "";

    ChildRun run;
    std::string buf;
    std::vector<std::string> lines;
    auto consume = [&](bool live) {
      for (const std::string& line : lines) {
        run.last_line = line;
        if (line.empty()) continue;
        const char tag = line[0];
        if (tag == 'O') {
          run.opened = true;
          std::istringstream in(line.substr(1));
          in >> run.index_version;
          indexed_ = run.index_version != 0;
        } else if (tag == 'B') {
          Batch b;
          if (!ParseBatch(line, true, &b, nullptr)) {
            run.errors.push_back("unparsable line: " + line);
            continue;
          }
          if (b.no < model_.next_batch || b.no <= run.max_batch) {
            run.errors.push_back("harness bug: batch number reused: " + line.substr(0, 40));
          }
          run.max_batch = std::max(run.max_batch, b.no);
          for (const auto& [id, ver] : b.items) {
            if (id < kAbsentIdBase) model_.next_id = std::max(model_.next_id, id + 1);
          }
          if (run.in_flight) {
            run.errors.push_back("intent for batch " + std::to_string(b.no) + " while batch " +
                                 std::to_string(run.in_flight->no) + " was not acknowledged");
          }
          ++intents;
          if (live && !triggered) {
            const bool fire = (plan == KillPlan::kAtIntent && intents == intent_target) ||
                              (plan == KillPlan::kFirstBuild && b.crosses) ||
                              (plan == KillPlan::kDuringMerge && b.kind == 'M');
            if (fire) {
              triggered = true;
              const double extra_ms = plan == KillPlan::kFirstBuild    ? (rng_() % 200000) / 1e3
                                      : plan == KillPlan::kDuringMerge ? (rng_() % 100000) / 1e3
                                                                       : (rng_() % 3000) / 1e3;
              deadline =
                  Clock::now() + std::chrono::microseconds(static_cast<long>(extra_ms * 1e3));
              trigger =
                  std::string(plan == KillPlan::kAtIntent     ? "intent #" + std::to_string(intents)
                              : plan == KillPlan::kFirstBuild ? "threshold batch"
                                                              : "Merge() call") +
                  " +" + std::to_string(extra_ms) + "ms";
            }
          }
          run.in_flight = std::move(b);
        } else if (tag == 'U' || tag == 'D' || tag == 'M') {
          Batch b;
          std::uint64_t existed = 0;
          if (!ParseBatch(line, false, &b, &existed)) {
            run.errors.push_back("unparsable line: " + line);
            continue;
          }
          if (!run.in_flight || run.in_flight->no != b.no) {
            run.errors.push_back("acknowledgement without intent: " + line.substr(0, 40));
          }
          if (b.crosses || (run.in_flight && run.in_flight->crosses)) indexed_ = true;
          run.in_flight.reset();
          ApplyBatch(&model_, b);
          ++run.acked;
        } else if (tag == 'V') {
          std::istringstream in(line.substr(1));
          int merging = 0;
          in >> run.index_version >> merging;
          indexed_ = run.index_version != 0;
          if (merging) ++run.merges_seen;
          run.merging = merging != 0;
          if (live && !triggered && plan == KillPlan::kDuringMerge && merging) {
            triggered = true;
            const double extra_ms = (rng_() % 300000) / 1e3;
            deadline = Clock::now() + std::chrono::microseconds(static_cast<long>(extra_ms * 1e3));
            trigger = "background merge +" + std::to_string(extra_ms) + "ms";
          }
        } else if (tag == 'E') {
          run.errors.push_back(line.substr(2));
        } else if (tag == 'F') {
          run.failure.push_back(line.substr(2));
        } else if (tag == 'C') {
          run.closed = true;
        } else {
          run.errors.push_back("unknown line: " + line.substr(0, 60));
        }
      }
      lines.clear();
    };

    bool eof = false;
    while (!eof) {
      const auto now = Clock::now();
      if (now >= deadline) break;
      const int wait_ms =
          static_cast<int>(
              std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) +
          1;
      pollfd pfd{fds[0], POLLIN, 0};
      const int pr = ::poll(&pfd, 1, std::min(wait_ms, 50));
      if (pr > 0) {
        eof = !ReadLines(fds[0], &buf, &lines);
        consume(true);
      }
    }
    if (!triggered) trigger = std::string(KillPlanName(plan)) + " (no event; fallback at 2.5 s)";
    if (drain) trigger += ", drain round";
    const double killed_at_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!eof) ::kill(pid, SIGKILL);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    while (ReadLines(fds[0], &buf, &lines)) consume(false);
    consume(false);
    ::close(fds[0]);
    model_.next_batch = std::max(model_.next_batch, run.max_batch + 1);

    Problems problems;
    const bool by_us = WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL && !eof;
    if (!by_us && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && run.closed)) {
      problems.Add("child died on its own",
                   WIFSIGNALED(wstatus) ? "signal " + std::to_string(WTERMSIG(wstatus)) + " (" +
                                              strsignal(WTERMSIG(wstatus)) + ")"
                                        : "exit status " + std::to_string(WEXITSTATUS(wstatus)));
    }
    for (const auto& f : run.failure) problems.Add("a write or open failed in the child", f);
    for (const auto& e : run.errors) problems.Add("the child saw a contract violation", e);

    // Reopen and verify.
    const auto t1 = Clock::now();
    auto opened = Collection::Open(coll_dir(), MakeOptions(a_.durability, a_.update_mode));
    const double open_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
    std::string in_flight_desc = run.in_flight ? Describe(*run.in_flight) : "none";
    if (!opened.ok()) {
      problems.Add("reopen after kill failed", opened.status().ToString());
      PrintRound(round, false, plan, trigger, killed_at_ms, run, in_flight_desc, "?", open_ms, -1,
                 nullptr);
      std::printf("%s", problems.ToString().c_str());
      return {false, true};
    }
    std::unique_ptr<Collection> c = std::move(*opened);
    std::string outcome;
    const double recall = Verify(*c, &model_, run.in_flight, rng_, &problems, &outcome);
    // A merge that reopening started (or recovery's first build) must not
    // fail: nothing in this harness is out of the ordinary.
    if (Status s = c->WaitForMerge(); !s.ok()) {
      problems.Add("a merge after reopening failed (WaitForMerge)", s.ToString());
    }
    const CollectionStats st = c->Stats();
    indexed_ = st.index_version != 0;
    const bool ok = problems.empty();
    PrintRound(round, ok, plan, trigger, killed_at_ms, run, in_flight_desc, outcome, open_ms,
               recall, &st);
    if (!ok) {
      std::printf("%s", problems.ToString().c_str());
      // The state as this round found it, before later rounds change it.
      const std::string copy = a_.dir + "/failed_round_" + std::to_string(round);
      std::error_code ec;
      std::filesystem::copy(coll_dir(), copy, std::filesystem::copy_options::recursive, ec);
      std::printf("    collection as found: %s%s\n", copy.c_str(), ec ? " (copy failed)" : "");
      std::printf(
          "    reproduce: collection_crash_harness --dir DIR --kills %d --seed %llu "
          "--durability %s --update-mode %s --fresh-every %d (round %d, child seed %llu; kill "
          "timing varies)\n",
          a_.kills, static_cast<unsigned long long>(a_.seed),
          std::string(DurabilityName(a_.durability)).c_str(),
          std::string(UpdateModeName(a_.update_mode)).c_str(), a_.fresh_every, round,
          static_cast<unsigned long long>(child_seed));
      result.ok = false;
      // Bring the collection back to the model so that later rounds test
      // from a known state (a loss that recurs is then a new loss).
      if (Status s = Repair(*c, model_, run.in_flight); !s.ok()) {
        std::printf("    repair failed: %s\n", s.ToString().c_str());
      }
    }
    if (Status s = c->Close(); !s.ok()) {
      std::printf("    Close failed: %s\n", s.ToString().c_str());
      result.ok = false;
    }
    c.reset();
    return result;
  }

  void PrintRound(int round, bool ok, KillPlan plan, const std::string& trigger, double killed_ms,
                  const ChildRun& run, const std::string& in_flight, const std::string& outcome,
                  double open_ms, double recall, const CollectionStats* st) {
    std::printf(
        "round %d/%d: %s kill[%s %s] at %.0f ms, %s, %llu acked, in flight: %s -> %s; "
        "reopen %.0f ms: live %zu",
        round, a_.kills, ok ? "OK" : "FAILED", KillPlanName(plan), trigger.c_str(), killed_ms,
        run.opened ? "opened" : "not opened", static_cast<unsigned long long>(run.acked),
        in_flight.c_str(), outcome.c_str(), open_ms, model_.live.size());
    if (st) {
      std::printf(" (indexed %llu, deleted %llu, pending %llu, version %llu%s)",
                  static_cast<unsigned long long>(st->indexed),
                  static_cast<unsigned long long>(st->deleted),
                  static_cast<unsigned long long>(st->pending),
                  static_cast<unsigned long long>(st->index_version),
                  st->merging ? ", merging" : "");
    }
    if (recall >= 0) std::printf(", recall@10 %.3f", recall);
    std::printf("\n");
  }

  // The issue's bar: recall within a point of a clean build of the same live
  // set. Both are merged first, so both search one SSD index version.
  void CompareWithCleanBuild(int* failed, int* passed) {
    if (model_.live.size() < kFlatThreshold) return;
    const auto queries = FixedQueries();
    const CollectionSearchParams params = MakeSearchParams();
    auto recall_of = [&](const std::string& dir, bool load, double* recall,
                         std::uint64_t* version) -> Status {
      STRATA_ASSIGN_OR_RETURN(auto c, Collection::Open(dir, MakeOptions(a_.durability, a_.update_mode)));
      if (load) {
        std::vector<VectorId> ids;
        std::vector<float> vecs;
        std::vector<std::string> pay;
        for (const auto& [id, ver] : model_.live) {
          ids.push_back(id);
          const auto v = MakeVector(id, ver);
          vecs.insert(vecs.end(), v.begin(), v.end());
          pay.push_back(MakePayload(id, ver));
        }
        STRATA_RETURN_IF_ERROR(c->Upsert(ids, vecs, pay));
      }
      STRATA_RETURN_IF_ERROR(c->WaitForMerge());
      STRATA_RETURN_IF_ERROR(c->Merge());
      STRATA_ASSIGN_OR_RETURN(auto res, c->SearchBatch(Flatten(queries), params, 2));
      *recall = Recall(res, queries, model_);
      *version = c->Stats().index_version;
      return c->Close();
    };
    double crash_recall = 0, clean_recall = 0;
    std::uint64_t crash_version = 0, clean_version = 0;
    Status s = recall_of(coll_dir(), false, &crash_recall, &crash_version);
    if (s.ok()) s = recall_of(a_.dir + "/clean", true, &clean_recall, &clean_version);
    const bool ok = s.ok() && crash_recall >= clean_recall - 0.01;
    std::printf(
        "clean-build comparison: %s: after a final merge, crash-built recall@10 %.3f "
        "(version %llu), clean build %.3f (version %llu), %zu live vectors%s%s\n",
        ok ? "OK" : "FAILED", crash_recall, static_cast<unsigned long long>(crash_version),
        clean_recall, static_cast<unsigned long long>(clean_version), model_.live.size(),
        s.ok() ? "" : ": ", s.ok() ? "" : s.ToString().c_str());
    if (!ok) {
      ++*failed;
      --*passed;  // counted against the last round: N rounds in the summary
    }
  }

  ParentArgs a_;
  std::mt19937_64 rng_;
  Model model_;
  int generation_ = 0;
  bool indexed_ = false;  // the current collection has (or may have) an SSD index
};

}  // namespace

int RunParent(const ParentArgs& a) { return Harness(a).Run(); }

}  // namespace strata::crash
