// CJack: the few C shims Swift cannot call directly.
//
// * jack_client_open is variadic, so Swift cannot call it; cjack_client_open
//   passes the server name explicitly.
// * A client's notification thread must be known before it is closed (jack2
//   #395, threads.c): cjack_client_open_watched finds it through /proc.
// * The real-time markers tell RealtimeSanitizer (when linked) and the
//   project's allocation counter (in tests) that the calling thread is inside
//   the JACK process callback.
#ifndef CJACK_H
#define CJACK_H

#include <jack/jack.h>
#include <jack/types.h>
#include <jack/metadata.h>
#include <jack/uuid.h>
#include <jack/session.h>
#include <jack/statistics.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <signal.h>
#include <pthread.h>

/// Opens a client on the named server (NULL: the default server) with the
/// given options; never variadic at the call site.
jack_client_t *cjack_client_open(const char *client_name,
                                 jack_options_t options,
                                 jack_status_t *status,
                                 const char *server_name);

/// What a libjack thread is doing (`cjack_thread_state`).
enum {
    /// The thread has exited.
    CJACK_THREAD_GONE = -1,
    /// The thread runs, or waits anywhere but in read().
    CJACK_THREAD_BUSY = 0,
    /// The thread is blocked in read() on a descriptor with nothing waiting
    /// in it: a notification thread waiting for the server's next word.
    CJACK_THREAD_IN_READ = 1,
};

/// Like `cjack_client_open`, and finds the client's notification thread (the
/// thread libjack started for it; 0 when there is none that waits in read(),
/// as with PipeWire's libjack). Names it "jack-notify" for top and gdb.
jack_client_t *cjack_client_open_watched(const char *client_name,
                                         jack_options_t options,
                                         jack_status_t *status,
                                         const char *server_name,
                                         int *notification_tid);

/// What the thread `tid` of this process is doing (a CJACK_THREAD_ value).
int cjack_thread_state(int tid);

/// The calling thread's Linux thread id (gettid).
int cjack_current_tid(void);

/// Marks the calling thread as inside the real-time process callback.
void cjack_realtime_enter(void);
/// Marks the calling thread as outside the real-time process callback.
void cjack_realtime_exit(void);
/// Whether the calling thread is inside the real-time process callback.
int cjack_in_realtime(void);

/// Monotonic clock in nanoseconds (vDSO clock_gettime; real-time safe).
unsigned long long cjack_monotonic_nanoseconds(void);

#endif
