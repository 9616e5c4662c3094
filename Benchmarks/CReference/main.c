// The standalone C reference: c-passthrough SERVER CHANNELS CYCLES prints
// CYCLES callback durations (nanoseconds, one per line).
#include "CReference.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SERVER CHANNELS CYCLES\n", argv[0]);
        return 2;
    }
    int cycles = atoi(argv[3]);
    unsigned long long *durations = calloc(cycles > 0 ? (size_t)cycles : 1, sizeof *durations);
    int status = cref_passthrough_run(argv[1], atoi(argv[2]), cycles, durations);
    if (status == 0) {
        for (int i = 0; i < cycles; i++) printf("%llu\n", durations[i]);
    }
    free(durations);
    return status;
}
