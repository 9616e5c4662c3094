#define _GNU_SOURCE
#include "CloseRaceHook.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

static atomic_int hold_milliseconds = 0;
static atomic_int state = 0;

void close_race_arm(int milliseconds) { atomic_store(&hold_milliseconds, milliseconds); }

int close_race_state(void) { return atomic_load(&state); }

int shm_open(const char *name, int oflag, mode_t mode) {
    static int (*real_shm_open)(const char *, int, mode_t);
    if (real_shm_open == NULL) real_shm_open = (int (*)(const char *, int, mode_t))dlsym(RTLD_NEXT, "shm_open");
    char thread[32] = {0};
    prctl(PR_GET_NAME, thread);
    if (strncmp(name, "jack_sem.", 9) == 0 && strcmp(thread, "jack-notify") == 0) {
        int milliseconds = atomic_exchange(&hold_milliseconds, 0);
        if (milliseconds > 0) {
            atomic_store(&state, 1);
            struct timespec pause = {milliseconds / 1000, (milliseconds % 1000) * 1000000L};
            while (nanosleep(&pause, &pause) != 0) {}
            atomic_store(&state, 2);
        }
    }
    return real_shm_open(name, oflag, mode);
}

// Preloaded into another program (LD_PRELOAD, built by the tests), the hook
// arms itself from CLOSE_RACE_HOLD_MS when the program starts.
__attribute__((constructor)) static void arm_from_environment(void) {
    const char *milliseconds = getenv("CLOSE_RACE_HOLD_MS");
    if (milliseconds != NULL) close_race_arm(atoi(milliseconds));
}
