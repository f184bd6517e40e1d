//===- Parallel.cpp - a small blocking thread pool ------------------------===//

#include "Parallel.h"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace zero::runtime::host {

namespace {

class ThreadPool {
public:
  ~ThreadPool() { resize(1); }

  int size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return threads_;
  }

  void resize(int count) {
    std::lock_guard<std::mutex> runLock(runMutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread &worker : workers_)
      worker.join();
    workers_.clear();
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
    threads_ = count < 1 ? 1 : count;
    for (int t = 1; t < threads_; ++t)
      workers_.emplace_back([this, t, seen = generation_] { work(t, seen); });
  }

  void run(int64_t numTasks, const std::function<void(int64_t)> &fn) {
    std::unique_lock<std::mutex> runLock(runMutex_, std::try_to_lock);
    if (inTask_ || !runLock.owns_lock() || workers_.empty()) {
      for (int64_t k = 0; k < numTasks; ++k)
        fn(k);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      numTasks_ = numTasks;
      pending_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    start_.notify_all();
    runShare(0, numTasks, fn);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

private:
  void runShare(int thread, int64_t numTasks,
                const std::function<void(int64_t)> &fn) {
    const int64_t begin = thread * numTasks / threads_;
    const int64_t end = (thread + 1) * numTasks / threads_;
    inTask_ = true;
    for (int64_t k = begin; k < end; ++k)
      fn(k);
    inTask_ = false;
  }

  void work(int thread, uint64_t seen) {
    while (true) {
      const std::function<void(int64_t)> *job;
      int64_t numTasks;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_)
          return;
        seen = generation_;
        job = job_;
        numTasks = numTasks_;
      }
      runShare(thread, numTasks, *job);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0)
        done_.notify_one();
    }
  }

  std::mutex runMutex_; // one loop at a time
  std::mutex mutex_;
  std::condition_variable start_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t)> *job_ = nullptr;
  int64_t numTasks_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  int threads_ = 1;
  bool stop_ = false;
  static thread_local bool inTask_;
};

thread_local bool ThreadPool::inTask_ = false;

ThreadPool &getPool() {
  static ThreadPool pool;
  return pool;
}

} // namespace

int getThreadCount() { return getPool().size(); }

void setThreadCount(int count) { getPool().resize(count); }

void parallelFor(int64_t numTasks, const std::function<void(int64_t)> &fn) {
  getPool().run(numTasks, fn);
}

} // namespace zero::runtime::host
