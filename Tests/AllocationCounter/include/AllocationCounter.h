// Counts heap allocations and frees made while a thread is inside the JACK
// process callback (between cjack_realtime_enter and cjack_realtime_exit).
// Test support only: it replaces malloc and friends for the test process.
#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

/// Allocations and frees seen on a real-time thread since the last reset.
unsigned long allocation_counter_realtime_events(void);
/// Allocations and frees seen on any thread since the last reset (shows the
/// counter is installed).
unsigned long allocation_counter_all_events(void);
/// Sets both counts to zero.
void allocation_counter_reset(void);

#endif
