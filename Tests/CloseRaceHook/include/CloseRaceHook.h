// Test support: makes jack2 #395 deterministic. A client's notification thread
// opens a "jack_sem.*" shared-memory name (shm_open) while it handles another
// client arriving, holding libjack's synchronisation mutex; this file defines
// shm_open for the executable it is linked into (it wins over libc's for
// libjack), and once armed, the next such call on a thread named
// "jack-notify" sleeps there first. Preloaded into another program
// (LD_PRELOAD), it arms itself from CLOSE_RACE_HOLD_MS.
#ifndef CLOSE_RACE_HOOK_H
#define CLOSE_RACE_HOOK_H

/// The next jack_sem.* open on a notification thread sleeps `milliseconds`.
void close_race_arm(int milliseconds);
/// 1 once a notification thread sleeps in the hook, 2 once it has left it.
int close_race_state(void);

#endif
