// LD_PRELOAD for tests: a JACK metadata store that stops answering, the way
// jackd2's Berkeley DB does when a process died holding one of its locks.
// With STUCK_METADATA set in the environment, every jack_get_property and
// jack_get_all_properties call of the process blocks for ever; without it,
// they are libjack's.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef uint64_t jack_uuid_t;

static void block_if_stuck(void) {
    if (getenv("STUCK_METADATA") == NULL) return;
    for (;;) pause();
}

int jack_get_property(jack_uuid_t subject, const char *key, char **value, char **type) {
    block_if_stuck();
    int (*real)(jack_uuid_t, const char *, char **, char **) = dlsym(RTLD_NEXT, "jack_get_property");
    return real(subject, key, value, type);
}

int jack_get_all_properties(void **descriptions) {
    block_if_stuck();
    int (*real)(void **) = dlsym(RTLD_NEXT, "jack_get_all_properties");
    return real(descriptions);
}
