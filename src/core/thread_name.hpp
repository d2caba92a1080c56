#pragma once
// Names the calling thread as `top -H`, `ps -L`, perf and gdb show it. Linux keeps at most 15 characters.

#include <pthread.h>

namespace tidemark {

inline void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace tidemark
