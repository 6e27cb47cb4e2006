#include "loader/libyuv_scratch.h"

#include <array>
#include <atomic>
#include <cstdlib>

namespace evenfeed {
namespace {

std::atomic<uint64_t> g_requests{0};
std::atomic<uint64_t> g_heap_allocations{0};

// A thread's kept blocks. libyuv holds at most two row buffers at once; four leaves room.
class ThreadBlocks {
 public:
  ThreadBlocks() = default;
  ThreadBlocks(const ThreadBlocks&) = delete;
  ThreadBlocks& operator=(const ThreadBlocks&) = delete;
  ~ThreadBlocks() {
    for (Block& block : blocks_) std::free(block.memory);
  }

  void* take(size_t bytes) {
    Block* spare = nullptr;  // a free block too small for this request
    for (Block& block : blocks_) {
      if (block.in_use) continue;
      if (block.capacity >= bytes) return hand_out(block);
      spare = &block;
    }
    g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
    if (spare == nullptr) return std::malloc(bytes);  // every block in use
    std::free(spare->memory);
    spare->memory = std::malloc(bytes);
    spare->capacity = spare->memory != nullptr ? bytes : 0;
    return spare->memory != nullptr ? hand_out(*spare) : nullptr;
  }

  // False when `pointer` is not one of this thread's blocks (a heap fallback).
  bool give_back(void* pointer) {
    for (Block& block : blocks_) {
      if (block.memory == pointer) {
        block.in_use = false;
        return true;
      }
    }
    return false;
  }

 private:
  struct Block {
    void* memory = nullptr;
    size_t capacity = 0;
    bool in_use = false;
  };

  static void* hand_out(Block& block) {
    block.in_use = true;
    return block.memory;
  }

  std::array<Block, 4> blocks_{};
};

ThreadBlocks& this_thread_blocks() {
  thread_local ThreadBlocks blocks;
  return blocks;
}

}  // namespace

LibyuvScratchStats libyuv_scratch_stats() {
  return {g_requests.load(std::memory_order_relaxed),
          g_heap_allocations.load(std::memory_order_relaxed)};
}

}  // namespace evenfeed

extern "C" void* evenfeed_libyuv_malloc(size_t bytes) {
  evenfeed::g_requests.fetch_add(1, std::memory_order_relaxed);
  return evenfeed::this_thread_blocks().take(bytes);
}

extern "C" void evenfeed_libyuv_free(void* pointer) {
  if (pointer == nullptr) return;
  if (!evenfeed::this_thread_blocks().give_back(pointer)) std::free(pointer);
}
