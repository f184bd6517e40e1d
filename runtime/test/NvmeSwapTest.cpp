//===- NvmeSwapTest.cpp - the NVMe swap store -----------------------------===//
//
// Round trips against a shadow copy of the arena, and every failure the
// store must name: a bad nvme_path, a second job, a file system without
// O_DIRECT, a full disk (RLIMIT_FSIZE in a child process, and an injected
// error), the file left behind by a crash.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/NvmeSwap.h"

#include "TempDirTest.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace zero::runtime;

namespace {

/// That `part` is in `text`, printing the text where it is not.
#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "'" << (part) << "' not in: " << (text)

class NvmeSwapTest : public test::TempDirTest {
protected:
  /// Small buffers and blocks, so that tensors of a few KiB take several
  /// chunks and requests.
  NvmeSwapOptions options(int64_t arenaBytes = int64_t(1) << 20) const {
    NvmeSwapOptions result;
    result.nvmePath = dir;
    result.rank = 0;
    result.arenaBytes = arenaBytes;
    result.bufferCount = 3;
    result.bufferSize = 16384;
    result.blockSize = 8192;
    result.queueDepth = 4;
    return result;
  }

  std::unique_ptr<NvmeSwapSpace> create(const NvmeSwapOptions &opts) {
    auto store = NvmeSwapSpace::create(opts);
    EXPECT_TRUE(store.isOk()) << store.status().toString();
    return store.isOk() ? std::move(store.value()) : nullptr;
  }

  std::vector<std::string> files() const {
    std::vector<std::string> names;
    if (DIR *handle = ::opendir(dir.c_str())) {
      while (dirent *entry = ::readdir(handle))
        if (entry->d_name[0] != '.')
          names.push_back(entry->d_name);
      ::closedir(handle);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::vector<std::byte> randomBytes(std::mt19937_64 &random, int64_t n) {
  std::vector<std::byte> bytes(n);
  for (std::byte &b : bytes)
    b = std::byte(random() & 0xff);
  return bytes;
}

/// Random writes (overlapping, outstanding together) and reads checked
/// against a shadow copy, for each combination of the I/O knobs.
struct Knobs {
  DirectIoMode directIo;
  bool overlapEvents;
  bool singleSubmit;
};

void PrintTo(const Knobs &knobs, std::ostream *os) {
  *os << "{directIo " << int(knobs.directIo) << ", overlapEvents "
      << knobs.overlapEvents << ", singleSubmit " << knobs.singleSubmit << "}";
}

class NvmeSwapRoundTrip : public NvmeSwapTest,
                          public ::testing::WithParamInterface<Knobs> {};

TEST_P(NvmeSwapRoundTrip, RandomRangesMatchShadow) {
  NvmeSwapOptions opts = options();
  opts.directIo = GetParam().directIo;
  opts.overlapEvents = GetParam().overlapEvents;
  opts.singleSubmit = GetParam().singleSubmit;
  auto store = create(opts);
  ASSERT_TRUE(store);
  if (opts.directIo == DirectIoMode::kOff)
    EXPECT_FALSE(store->directIo());
  std::vector<std::byte> shadow(opts.arenaBytes);
  std::mt19937_64 random(42);
  // Sizes: empty, under a block, unaligned, and over the whole pool
  // (bufferCount x bufferSize = 48 KiB).
  const int64_t sizes[] = {0, 1, 511, 4095, 4096, 4097, 16384, 20000, 70001};
  int64_t written = 0, read = 0;
  for (int round = 0; round < 12; ++round) {
    std::vector<std::vector<std::byte>> sources;
    std::vector<NvmeSwapSpace::Ticket> tickets;
    for (int i = 0; i < 8; ++i) {
      int64_t bytes = sizes[random() % std::size(sizes)];
      int64_t offset = random() % (opts.arenaBytes - bytes + 1);
      sources.push_back(randomBytes(random, bytes));
      if (bytes > 0)
        std::memcpy(shadow.data() + offset, sources.back().data(), bytes);
      tickets.push_back(store->write(offset, sources.back().data(), bytes,
                                     "w" + std::to_string(i)));
      written += bytes;
    }
    // Reads outstanding with the writes: ordered after them where they
    // overlap.
    std::vector<std::pair<int64_t, std::vector<std::byte>>> reads;
    for (int i = 0; i < 8; ++i) {
      int64_t bytes = sizes[random() % std::size(sizes)];
      int64_t offset = random() % (opts.arenaBytes - bytes + 1);
      reads.emplace_back(offset, std::vector<std::byte>(bytes));
      tickets.push_back(
          store->read(offset, reads.back().second.data(), bytes, "r"));
      read += bytes;
    }
    for (NvmeSwapSpace::Ticket ticket : tickets) {
      Status status = store->wait(ticket);
      ASSERT_TRUE(status.isOk()) << status.toString();
    }
    for (auto &[offset, bytes] : reads)
      ASSERT_TRUE(
          std::equal(bytes.begin(), bytes.end(), shadow.begin() + offset))
          << "round " << round << ", offset " << offset << ", " << bytes.size()
          << " bytes";
  }
  // The whole arena, once more, in one read.
  std::vector<std::byte> all(opts.arenaBytes);
  ASSERT_TRUE(store->wait(store->read(0, all.data(), all.size(), "all")));
  EXPECT_TRUE(all == shadow);
  NvmeSwapStats stats = store->stats();
  EXPECT_EQ(stats.bytesWritten, written);
  EXPECT_EQ(stats.bytesRead, read + opts.arenaBytes);
  EXPECT_GE(stats.fileBytesWritten, stats.bytesWritten);
  EXPECT_GE(stats.fileBytesRead, stats.bytesRead);
}

INSTANTIATE_TEST_SUITE_P(
    Knobs, NvmeSwapRoundTrip,
    ::testing::Values(Knobs{DirectIoMode::kAuto, true, false},
                      Knobs{DirectIoMode::kOff, true, false},
                      Knobs{DirectIoMode::kAuto, false, false},
                      Knobs{DirectIoMode::kAuto, true, true}),
    [](const ::testing::TestParamInfo<Knobs> &info) {
      const Knobs &knobs = info.param;
      return std::string(knobs.directIo == DirectIoMode::kOff ? "Buffered"
                                                              : "Direct") +
             (knobs.overlapEvents ? "Overlapped" : "OneChunkAtATime") +
             (knobs.singleSubmit ? "SingleSubmit" : "");
    });

TEST_F(NvmeSwapTest, NeighboursSharingABlockKeepEachOthersBytes) {
  auto store = create(options());
  ASSERT_TRUE(store);
  // Three tensors in two blocks, none aligned, written without waiting:
  // each read-modify-write of a shared block sees the previous one.
  std::mt19937_64 random(7);
  auto a = randomBytes(random, 3000), b = randomBytes(random, 2000),
       c = randomBytes(random, 100);
  NvmeSwapSpace::Ticket tickets[] = {store->write(100, a.data(), 3000, "a"),
                                     store->write(3100, b.data(), 2000, "b"),
                                     store->write(5100, c.data(), 100, "c")};
  std::vector<std::byte> back(5100);
  NvmeSwapSpace::Ticket readTicket =
      store->read(100, back.data(), back.size(), "abc");
  for (NvmeSwapSpace::Ticket ticket : tickets)
    ASSERT_TRUE(store->wait(ticket));
  ASSERT_TRUE(store->wait(readTicket));
  EXPECT_TRUE(std::equal(a.begin(), a.end(), back.begin()));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), back.begin() + 3000));
  EXPECT_TRUE(std::equal(c.begin(), c.end(), back.begin() + 5000));
}

TEST_F(NvmeSwapTest, ReadAfterWriteOfTheSameBytesWithoutWaiting) {
  auto store = create(options());
  ASSERT_TRUE(store);
  std::mt19937_64 random(3);
  for (int i = 0; i < 20; ++i) {
    auto data = randomBytes(random, 40000);
    std::vector<std::byte> back(data.size());
    NvmeSwapSpace::Ticket write =
        store->write(777, data.data(), data.size(), "t");
    NvmeSwapSpace::Ticket read =
        store->read(777, back.data(), back.size(), "t");
    ASSERT_TRUE(store->wait(read));
    ASSERT_TRUE(store->wait(write));
    ASSERT_TRUE(back == data) << "iteration " << i;
  }
}

TEST_F(NvmeSwapTest, ThreadsSubmitTogether) {
  auto store = create(options());
  ASSERT_TRUE(store);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 random(t);
      int64_t base = t * 200000 + 13;
      for (int i = 0; i < 10; ++i) {
        auto data = randomBytes(random, 30000 + i * 1000);
        std::vector<std::byte> back(data.size());
        NvmeSwapSpace::Ticket write =
            store->write(base, data.data(), data.size(), "t");
        if (!store->wait(write).isOk() ||
            !store->wait(store->read(base, back.data(), back.size(), "t"))
                 .isOk() ||
            back != data)
          ++failures[t];
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST_F(NvmeSwapTest, ZeroBytesAndCounters) {
  auto store = create(options());
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->wait(store->write(0, nullptr, 0, "empty")));
  EXPECT_TRUE(store->wait(store->read(1 << 20, nullptr, 0, "empty at end")));
  std::vector<std::byte> data(10000, std::byte(5));
  EXPECT_TRUE(store->wait(store->write(10, data.data(), data.size(), "t")));
  EXPECT_TRUE(store->wait(store->read(10, data.data(), 4000, "t")));
  NvmeSwapStats stats = store->stats();
  EXPECT_EQ(stats.bytesWritten, 10000);
  EXPECT_EQ(stats.bytesRead, 4000);
  EXPECT_EQ(stats.writes, 1);
  EXPECT_EQ(stats.reads, 1);
  // 10 + 10000 spans blocks [0, 12288): three blocks written, and the two
  // edge blocks read first.
  EXPECT_EQ(stats.fileBytesWritten, 12288);
  EXPECT_EQ(stats.fileBytesRead, 8192 + 4096);
}

TEST_F(NvmeSwapTest, TicketsAndRanges) {
  auto store = create(options(100000));
  ASSERT_TRUE(store);
  std::vector<std::byte> data(100);
  Status outside = store->wait(store->write(99950, data.data(), 100, "w.big"));
  EXPECT_EQ(outside.code(), StatusCode::kOutOfRange);
  EXPECT_CONTAINS(outside.message(),
                  (store->path() + ": rank 0: cannot write tensor "
                                   "'w.big': bytes [99950, 99950 + 100) "
                                   "are not inside the nvme arena of "
                                   "100000 bytes"));
  Status null = store->wait(store->read(0, nullptr, 100, "r"));
  EXPECT_CONTAINS(null.message(), ("tensor 'r': its memory is null"));
  NvmeSwapSpace::Ticket ticket = store->write(0, data.data(), 100, "w");
  EXPECT_TRUE(store->wait(ticket));
  Status again = store->wait(ticket);
  EXPECT_CONTAINS(again.message(), ("is not outstanding"));
  // drain() waits on every ticket and reports the first error.
  store->write(0, data.data(), 100, "w");
  store->write(-1, data.data(), 100, "w.negative");
  store->read(0, data.data(), 100, "r");
  Status drained = store->drain();
  EXPECT_CONTAINS(drained.message(), ("'w.negative'"));
  EXPECT_TRUE(store->drain());
}

//===----------------------------------------------------------------------===//
// The directory and the lock
//===----------------------------------------------------------------------===//

TEST_F(NvmeSwapTest, MissingDirectory) {
  NvmeSwapOptions opts = options();
  opts.nvmePath = path("absent");
  auto store = NvmeSwapSpace::create(opts);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.status().message(),
            path("absent") + ": nvme_path: No such file or directory");
}

TEST_F(NvmeSwapTest, NotADirectory) {
  NvmeSwapOptions opts = options();
  opts.nvmePath = writeBytes("file", "x");
  auto store = NvmeSwapSpace::create(opts);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().message(),
            path("file") + ": nvme_path: Not a directory");
}

TEST_F(NvmeSwapTest, DirectoryNotWritable) {
  // Permission bits do not stop root: sysfs refuses new files to anyone.
  struct stat info;
  if (::stat("/sys", &info) != 0 || !S_ISDIR(info.st_mode))
    GTEST_SKIP() << "no /sys here";
  NvmeSwapOptions opts = options();
  opts.nvmePath = "/sys";
  auto store = NvmeSwapSpace::create(opts);
  ASSERT_FALSE(store.isOk());
  EXPECT_CONTAINS(store.status().message(),
                  ("/sys/zero-swap.rank0.lock: cannot create the swap "
                   "lock file: "));
}

TEST_F(NvmeSwapTest, BadKnobs) {
  NvmeSwapOptions opts = options();
  opts.alignment = 1000;
  auto store = NvmeSwapSpace::create(opts);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().message(),
            "nvme swap of rank 0 in '" + dir +
                "': alignment 1000 is not a power of two of at least 512");
  opts = options();
  opts.queueDepth = 0;
  EXPECT_CONTAINS(NvmeSwapSpace::create(opts).status().message(),
                  ("aio.queue_depth 0 is not in [1, 4096]"));
}

TEST_F(NvmeSwapTest, SecondJobOnTheSameRankIsRefused) {
  auto first = create(options());
  ASSERT_TRUE(first);
  std::vector<std::byte> data(5000, std::byte(9));
  ASSERT_TRUE(first->wait(first->write(0, data.data(), data.size(), "t")));

  // Another process, as a second job would be.
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  pid_t child = ::fork();
  if (child == 0) {
    auto second = NvmeSwapSpace::create(options());
    std::string message = second.isOk() ? "created" : second.status().message();
    (void)!::write(pipeFds[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(pipeFds[1]);
  char text[1024] = {0};
  (void)!::read(pipeFds[0], text, sizeof(text) - 1);
  ::close(pipeFds[0]);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(std::string(text),
            path("zero-swap.rank0.lock") + ": another job (pid " +
                std::to_string(::getpid()) +
                ") is swapping to this nvme_path as rank 0; give each job its "
                "own nvme_path: Resource temporarily unavailable");

  // The same process is refused too, and another rank is not.
  EXPECT_FALSE(NvmeSwapSpace::create(options()).isOk());
  NvmeSwapOptions rank1 = options();
  rank1.rank = 1;
  EXPECT_TRUE(create(rank1));

  // The first store's bytes are intact.
  std::vector<std::byte> back(data.size());
  ASSERT_TRUE(first->wait(first->read(0, back.data(), back.size(), "t")));
  EXPECT_TRUE(back == data);
  first.reset();
  EXPECT_TRUE(create(options()));
}

TEST_F(NvmeSwapTest, FilesRemovedOnDestructionAndAfterACrash) {
  auto store = create(options());
  ASSERT_TRUE(store);
  EXPECT_EQ(store->path(), path("zero-swap.rank0.bin"));
  // The file is unlinked once open: only the lock has a name.
  EXPECT_EQ(files(), std::vector<std::string>{"zero-swap.rank0.lock"});
  store.reset();
  EXPECT_EQ(files(), std::vector<std::string>{});

  pid_t child = ::fork();
  if (child == 0) {
    auto crashing = NvmeSwapSpace::create(options());
    std::vector<std::byte> data(50000, std::byte(1));
    if (crashing.isOk())
      (void)crashing.value()->write(0, data.data(), data.size(), "t");
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  // The killed job's lock file stays, unlocked; its swap file is gone.
  EXPECT_EQ(files(), std::vector<std::string>{"zero-swap.rank0.lock"});
  EXPECT_TRUE(create(options()));
}

TEST_F(NvmeSwapTest, DiskTooSmallForTheArena) {
  auto store = NvmeSwapSpace::create(options(int64_t(1) << 60));
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().code(), StatusCode::kResourceExhausted);
  EXPECT_CONTAINS(store.status().message(),
                  (path("zero-swap.rank0.bin") +
                   ": cannot reserve 1152921504606846976 bytes for rank "
                   "0's nvme arena: "));
  // Nothing is left behind.
  EXPECT_EQ(files(), std::vector<std::string>{});
}

//===----------------------------------------------------------------------===//
// O_DIRECT
//===----------------------------------------------------------------------===//

TEST_F(NvmeSwapTest, NoDirectIoFallsBackWithANotice) {
  NvmeSwapOptions opts = options();
  opts.faults.refuseDirectIo = true;
  auto store = create(opts);
  ASSERT_TRUE(store);
  EXPECT_FALSE(store->directIo());
  EXPECT_EQ(store->notice(),
            path("zero-swap.rank0.bin") +
                ": the file system refuses O_DIRECT (Invalid argument): "
                "swapping through the page cache");
  std::vector<std::byte> data(30000, std::byte(3)), back(30000);
  ASSERT_TRUE(store->wait(store->write(5, data.data(), data.size(), "t")));
  ASSERT_TRUE(store->wait(store->read(5, back.data(), back.size(), "t")));
  EXPECT_TRUE(back == data);
}

TEST_F(NvmeSwapTest, NoDirectIoRefusedWhenRequired) {
  NvmeSwapOptions opts = options();
  opts.faults.refuseDirectIo = true;
  opts.directIo = DirectIoMode::kRequire;
  auto store = NvmeSwapSpace::create(opts);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().message(),
            path("zero-swap.rank0.bin") +
                ": the file system refuses O_DIRECT, which the options "
                "require: Invalid argument");
  EXPECT_EQ(files(), std::vector<std::string>{});
}

TEST_F(NvmeSwapTest, DirectIoWhereTheFileSystemHasIt) {
  NvmeSwapOptions opts = options();
  opts.directIo = DirectIoMode::kRequire;
  auto store = NvmeSwapSpace::create(opts);
  if (!store.isOk())
    GTEST_SKIP() << "no O_DIRECT here: " << store.status().toString();
  EXPECT_TRUE(store.value()->directIo());
  EXPECT_EQ(store.value()->notice(), "");
}

//===----------------------------------------------------------------------===//
// Failed writes
//===----------------------------------------------------------------------===//

TEST_F(NvmeSwapTest, InjectedWriteFailureNamesEverythingAndIsolatesTheTensor) {
  NvmeSwapOptions opts = options();
  opts.rank = 2;
  // The second chunk (bytes [16384, 32768)) of the tensor at 4000.
  opts.faults.failAtFileOffset = 20000;
  opts.faults.errorNumber = ENOSPC;
  auto store = create(opts);
  ASSERT_TRUE(store);
  std::vector<std::byte> good(3000, std::byte(1)), bad(60000, std::byte(2)),
      after(1000, std::byte(3));
  ASSERT_TRUE(store->wait(store->write(0, good.data(), good.size(), "good")));
  store->setStep(7);
  Status failed =
      store->wait(store->write(4000, bad.data(), bad.size(), "w.m"));
  ASSERT_FALSE(failed.isOk());
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(failed.message(),
            path("zero-swap.rank2.bin") +
                ": rank 2, step 7: cannot write tensor 'w.m' at offset 4000 "
                "(60000 bytes): the write of 8192 bytes at file offset 16384 "
                "failed: No space left on device");
  EXPECT_EQ(store->stats().bytesWritten, 3000);

  // The tensor's bytes read as an error, not as data; its neighbours and the
  // rest of the arena still work.
  std::vector<std::byte> back(60000);
  Status readBad = store->wait(store->read(4000, back.data(), 100, "w.m"));
  EXPECT_EQ(readBad.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(readBad.message(),
            path("zero-swap.rank2.bin") +
                ": rank 2, step 7: cannot read tensor 'w.m' at offset 4000 "
                "(100 bytes): bytes [4000, 64000) were last written by "
                "tensor 'w.m', whose write failed");
  ASSERT_TRUE(store->wait(store->read(0, back.data(), 3000, "good")));
  EXPECT_TRUE(std::equal(good.begin(), good.end(), back.begin()));
  ASSERT_TRUE(
      store->wait(store->write(100000, after.data(), after.size(), "after")));
  ASSERT_TRUE(store->wait(store->read(100000, back.data(), 1000, "after")));
  EXPECT_TRUE(std::equal(after.begin(), after.end(), back.begin()));
  // A successful write over part of it makes that part readable.
  ASSERT_TRUE(store->wait(store->write(4000, after.data(), 1000, "w.m")));
  ASSERT_TRUE(store->wait(store->read(4000, back.data(), 1000, "w.m")));
  EXPECT_FALSE(store->wait(store->read(5000, back.data(), 10, "w.m")).isOk());
}

TEST_F(NvmeSwapTest, InjectedReadFailure) {
  NvmeSwapOptions opts = options();
  opts.faults.failAtFileOffset = 0;
  opts.faults.failWrites = false;
  opts.faults.errorNumber = EIO;
  auto store = create(opts);
  ASSERT_TRUE(store);
  std::vector<std::byte> data(8192, std::byte(4));
  // An aligned write needs no read.
  ASSERT_TRUE(store->wait(store->write(0, data.data(), data.size(), "t")));
  Status failed = store->wait(store->read(0, data.data(), 10, "t"));
  EXPECT_EQ(failed.message(),
            path("zero-swap.rank0.bin") +
                ": rank 0: cannot read tensor 't' at offset 0 (10 bytes): the "
                "read of 4096 bytes at file offset 0 failed: Input/output "
                "error");
  // A partial write of that block fails in its read-modify-write.
  Status edge = store->wait(store->write(1, data.data(), 10, "u"));
  EXPECT_CONTAINS(edge.message(),
                  ("cannot write tensor 'u' at offset 1 (10 bytes): the "
                   "read of 4096 bytes at file offset 0 (the edge block "
                   "of a partial write) failed: Input/output error"));
}

/// A real full disk: past RLIMIT_FSIZE the kernel fails writes with EFBIG,
/// as it fails them with ENOSPC on a full disk. In a child process, whose
/// limit is its own.
TEST_F(NvmeSwapTest, FileSizeLimitDuringAWrite) {
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pipeFds[0]);
    std::string report;
    auto check = [&](bool ok, const std::string &what) {
      if (!ok)
        report += what + "\n";
    };
    ::signal(SIGXFSZ, SIG_IGN);
    NvmeSwapOptions opts = options(int64_t(4) << 20);
    opts.rank = 3;
    auto created = NvmeSwapSpace::create(opts);
    if (!created.isOk()) {
      report = created.status().toString();
    } else {
      NvmeSwapSpace &store = *created.value();
      rlimit limit;
      ::getrlimit(RLIMIT_FSIZE, &limit);
      rlimit low = limit;
      low.rlim_cur = 1 << 20;
      ::setrlimit(RLIMIT_FSIZE, &low);
      store.setStep(12);
      std::vector<std::byte> data(1 << 20, std::byte(6)), back(1 << 20);
      Status failed = store.wait(
          store.write(512 << 10, data.data(), data.size(), "layer.3.w"));
      std::string expected =
          path("zero-swap.rank3.bin") +
          ": rank 3, step 12: cannot write tensor 'layer.3.w' at offset "
          "524288 (1048576 bytes): the write of ";
      check(failed.message().rfind(expected, 0) == 0 &&
                failed.message().find("failed: File too large") !=
                    std::string::npos &&
                failed.code() == StatusCode::kResourceExhausted,
            "write: " + failed.toString());
      Status readBack = store.wait(
          store.read(512 << 10, back.data(), back.size(), "layer.3.w"));
      check(readBack.message().find("whose write failed") != std::string::npos,
            "read: " + readBack.toString());
      // Below the limit the store goes on; with the limit lifted the tensor
      // can be written again.
      check(store.wait(store.write(0, data.data(), 4096, "small")).isOk(),
            "small write");
      ::setrlimit(RLIMIT_FSIZE, &limit);
      check(store
                .wait(store.write(512 << 10, data.data(), data.size(),
                                  "layer.3.w"))
                .isOk(),
            "rewrite");
      Status reread = store.wait(
          store.read(512 << 10, back.data(), back.size(), "layer.3.w"));
      check(reread.isOk() && back == data, "reread: " + reread.toString());
    }
    (void)!::write(pipeFds[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(pipeFds[1]);
  std::string report;
  char text[4096];
  ssize_t got;
  while ((got = ::read(pipeFds[0], text, sizeof(text))) > 0)
    report.append(text, got);
  ::close(pipeFds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(report, "");
}

} // namespace
