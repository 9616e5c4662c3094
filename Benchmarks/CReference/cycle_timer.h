// What both C reference clients share: a monotonic clock and the table of
// callback durations they fill, one entry per cycle until it is full.
#ifndef CYCLE_TIMER_H
#define CYCLE_TIMER_H

#include <stdatomic.h>
#include <time.h>

typedef struct {
    unsigned long long *durations;
    int capacity;
    atomic_int recorded;
} cycle_timer;

static inline unsigned long long cycle_timer_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/// Records the duration of a cycle that started at `start` (real-time safe).
static inline void cycle_timer_record(cycle_timer *timer, unsigned long long start) {
    int index = atomic_load_explicit(&timer->recorded, memory_order_relaxed);
    if (index < timer->capacity) {
        timer->durations[index] = cycle_timer_now() - start;
        atomic_store_explicit(&timer->recorded, index + 1, memory_order_release);
    }
}

/// Whether every entry is filled.
static inline int cycle_timer_full(cycle_timer *timer) {
    return atomic_load_explicit(&timer->recorded, memory_order_acquire) >= timer->capacity;
}

#endif
