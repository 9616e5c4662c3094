#include "CJack.h"
#include <time.h>

jack_client_t *cjack_client_open(const char *client_name,
                                 jack_options_t options,
                                 jack_status_t *status,
                                 const char *server_name) {
    if (server_name != NULL) {
        return jack_client_open(client_name, options | JackServerName, status, server_name);
    }
    return jack_client_open(client_name, options, status);
}

// RealtimeSanitizer's entry points. They are weak: in an ordinary build they
// are absent (NULL) and the markers only flip the thread-local flag; in the
// `make rtsan` build the runtime is linked and every malloc, free, lock or
// blocking call between enter and exit aborts with a report.
extern void __rtsan_realtime_enter(void) __attribute__((weak));
extern void __rtsan_realtime_exit(void) __attribute__((weak));

static __thread int cjack_realtime_depth = 0;

void cjack_realtime_enter(void) {
    cjack_realtime_depth = 1;
    if (__rtsan_realtime_enter) __rtsan_realtime_enter();
}

void cjack_realtime_exit(void) {
    if (__rtsan_realtime_exit) __rtsan_realtime_exit();
    cjack_realtime_depth = 0;
}

int cjack_in_realtime(void) { return cjack_realtime_depth; }

unsigned long long cjack_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
}
