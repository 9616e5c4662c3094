#ifndef CWAKEUP_H
#define CWAKEUP_H

#include <semaphore.h>

/// Waits until `semaphore` is posted or `timeout_ns` nanoseconds of
/// CLOCK_MONOTONIC have passed (a wall-clock step does not lengthen it).
/// 0 when it was posted, -1 when the time ran out.
int cwakeup_wait(sem_t *semaphore, long long timeout_ns);

/// A new eventfd, close-on-exec and non-blocking, to wake a poll from
/// another thread (a write of 1 makes it readable); -1 on failure.
int cwakeup_eventfd(void);

#endif
