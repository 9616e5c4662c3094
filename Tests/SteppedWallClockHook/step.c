// LD_PRELOAD for tests: a process whose wall clock steps when the test says,
// as NTP's correction, a person setting the time or an RTC read at boot do,
// while its monotonic clocks run on untouched. With WALL_CLOCK_STEP_FILE
// naming a file that holds a number of seconds (e.g. -3600), CLOCK_REALTIME
// (and its coarse form, gettimeofday and time) read the real time plus that
// many seconds. The file is read again at most every 20 ms of monotonic
// time, so writing a new number into it steps the clock within that.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime;
static const char *step_file;
static _Atomic int64_t offset_ns;
static _Atomic int64_t read_at_ns = INT64_MIN;
static pthread_mutex_t reading = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void setup(void) {
    real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    step_file = getenv("WALL_CLOCK_STEP_FILE");
}

static int64_t monotonic_ns(void) {
    struct timespec now;
    real_clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
}

// The step now, nanoseconds: the file's number, read again when 20 ms passed.
static int64_t current_offset(void) {
    if (step_file == NULL) return 0;
    int64_t now = monotonic_ns();
    int64_t last = atomic_load(&read_at_ns);
    if ((last == INT64_MIN || now - last >= 20000000LL) && pthread_mutex_trylock(&reading) == 0) {
        FILE *file = fopen(step_file, "r");
        double seconds;
        if (file != NULL) {
            if (fscanf(file, "%lf", &seconds) == 1) atomic_store(&offset_ns, (int64_t)(seconds * 1e9));
            fclose(file);
        }
        atomic_store(&read_at_ns, now);
        pthread_mutex_unlock(&reading);
    }
    return atomic_load(&offset_ns);
}

static void shift(struct timespec *time, int64_t by) {
    int64_t total = (int64_t)time->tv_sec * 1000000000LL + time->tv_nsec + by;
    time->tv_sec = total / 1000000000LL;
    time->tv_nsec = total % 1000000000LL;
    if (time->tv_nsec < 0) {
        time->tv_nsec += 1000000000LL;
        time->tv_sec -= 1;
    }
}

int clock_gettime(clockid_t id, struct timespec *out) {
    pthread_once(&once, setup);
    int result = real_clock_gettime(id, out);
    if (result == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) shift(out, current_offset());
    return result;
}

int gettimeofday(struct timeval *restrict out, void *restrict zone) {
    (void)zone;
    struct timespec now;
    int result = clock_gettime(CLOCK_REALTIME, &now);
    if (result == 0) {
        out->tv_sec = now.tv_sec;
        out->tv_usec = now.tv_nsec / 1000;
    }
    return result;
}

time_t time(time_t *out) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (out != NULL) *out = now.tv_sec;
    return now.tv_sec;
}
