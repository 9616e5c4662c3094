// The standalone C reference: c-passthrough SERVER CHANNELS CYCLES [SOURCES DESTINATIONS]
// prints CYCLES callback durations (nanoseconds, one per line). SOURCES and
// DESTINATIONS are port names, one per line (default: the loopback's).
#include "CReference.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: %s SERVER CHANNELS CYCLES [SOURCES DESTINATIONS]\n", argv[0]);
        return 2;
    }
    int cycles = atoi(argv[3]);
    unsigned long long *durations = calloc(cycles > 0 ? (size_t)cycles : 1, sizeof *durations);
    int status = cref_passthrough_run(argv[1], atoi(argv[2]), cycles, argc == 6 ? argv[4] : NULL,
                                      argc == 6 ? argv[5] : NULL, durations);
    if (status == 0) {
        for (int i = 0; i < cycles; i++) printf("%llu\n", durations[i]);
    }
    free(durations);
    return status;
}
