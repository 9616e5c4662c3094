// CJack: the few C shims Swift cannot call directly.
//
// * jack_client_open is variadic, so Swift cannot call it; cjack_client_open
//   passes the server name explicitly.
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

/// Opens a client on the named server (NULL: the default server) with the
/// given options; never variadic at the call site.
jack_client_t *cjack_client_open(const char *client_name,
                                 jack_options_t options,
                                 jack_status_t *status,
                                 const char *server_name);

/// Marks the calling thread as inside the real-time process callback.
void cjack_realtime_enter(void);
/// Marks the calling thread as outside the real-time process callback.
void cjack_realtime_exit(void);
/// Whether the calling thread is inside the real-time process callback.
int cjack_in_realtime(void);

/// Monotonic clock in nanoseconds (vDSO clock_gettime; real-time safe).
unsigned long long cjack_monotonic_nanoseconds(void);

#endif
