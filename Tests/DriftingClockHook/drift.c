// LD_PRELOAD for tests: a process whose monotonic clocks run fast or slow.
// With DRIFT_PPM set (e.g. 1000 or -1000), CLOCK_MONOTONIC and
// CLOCK_MONOTONIC_RAW read as the time since the process's first read of
// each, scaled by 1 + DRIFT_PPM / 10^6, added to that first read. jackd's
// dummy backend paces its cycles by these clocks, so its sample clock then
// runs that much fast or slow against the wall clock, as a sound card's
// crystal does. DRIFT_ORIGIN_NS, when set, is CLOCK_MONOTONIC's origin.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime;
static double scale = 1.0;
static int64_t origin[2];
static int started[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void setup(void) {
    real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    const char *ppm = getenv("DRIFT_PPM");
    if (ppm != NULL) scale = 1.0 + atof(ppm) / 1e6;
    // DRIFT_ORIGIN_NS: CLOCK_MONOTONIC's origin given (nanoseconds, a reading
    // taken before the process started), so that another process can turn
    // this one's monotonic times into true ones: true = origin + (t - origin) / scale.
    const char *origin_ns = getenv("DRIFT_ORIGIN_NS");
    if (origin_ns != NULL) {
        origin[0] = strtoll(origin_ns, NULL, 10);
        started[0] = 1;
    }
    // DRIFT_ORIGIN_RAW_NS: the same for CLOCK_MONOTONIC_RAW (jackd2 times its cycles by it).
    const char *raw_ns = getenv("DRIFT_ORIGIN_RAW_NS");
    if (raw_ns != NULL) {
        origin[1] = strtoll(raw_ns, NULL, 10);
        started[1] = 1;
    }
}

int clock_gettime(clockid_t id, struct timespec *out) {
    pthread_once(&once, setup);
    int result = real_clock_gettime(id, out);
    int slot = id == CLOCK_MONOTONIC ? 0 : id == CLOCK_MONOTONIC_RAW ? 1 : -1;
    if (result != 0 || slot < 0 || scale == 1.0) return result;
    int64_t now = (int64_t)out->tv_sec * 1000000000LL + out->tv_nsec;
    pthread_mutex_lock(&lock);
    if (!started[slot]) {
        origin[slot] = now;
        started[slot] = 1;
    }
    int64_t first = origin[slot];
    pthread_mutex_unlock(&lock);
    int64_t scaled = first + (int64_t)((double)(now - first) * scale);
    out->tv_sec = scaled / 1000000000LL;
    out->tv_nsec = scaled % 1000000000LL;
    return result;
}
