#define _GNU_SOURCE
#include <errno.h>
#include <time.h>
#include <sys/eventfd.h>
#include "CWakeup.h"

int cwakeup_wait(sem_t *semaphore, long long timeout_ns) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)(timeout_ns / 1000000000LL);
    deadline.tv_nsec += (long)(timeout_ns % 1000000000LL);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    // sem_clockwait (glibc 2.30): sem_timedwait would take a CLOCK_REALTIME deadline.
    while (sem_clockwait(semaphore, CLOCK_MONOTONIC, &deadline) != 0) {
        if (errno != EINTR) return -1;
    }
    return 0;
}

int cwakeup_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
