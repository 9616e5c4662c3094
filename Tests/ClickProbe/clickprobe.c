// clickprobe: a JACK client for the logger's time tests. Its port `out`
// carries a one-sample click at every JACK frame that is a multiple of
// CLICK_EVERY (argv), of amplitude (1 + k mod 255) / 256 for the k-th such
// frame, so that a click found in a file names its frame. It writes a line
// for every cycle it runs, from a thread of its own: the cycle's first frame,
// the server's time of it and of the next cycle (jack_get_cycle_times, in
// the server's CLOCK_MONOTONIC microseconds), the frames, and this
// process's CLOCK_MONOTONIC and CLOCK_REALTIME when the callback ran (ns).
//
// usage: clickprobe SERVER CLICK_EVERY LOGFILE   (runs until SIGTERM or SIGINT)
#include <jack/jack.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    jack_nframes_t frames;
    jack_nframes_t nframes;
    jack_time_t usecs, next_usecs;
    int64_t monotonic, realtime;
} Cycle;

#define RING 65536
static Cycle ring[RING];
static atomic_uint_fast64_t written, readIndex;
static jack_port_t *port;
static jack_client_t *client;
static uint32_t every;
static volatile sig_atomic_t done;

static int64_t now(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    Cycle c;
    c.monotonic = now(CLOCK_MONOTONIC);
    c.realtime = now(CLOCK_REALTIME);
    float period_usecs;
    jack_get_cycle_times(client, &c.frames, &c.usecs, &c.next_usecs, &period_usecs);
    c.nframes = nframes;
    float *out = jack_port_get_buffer(port, nframes);
    memset(out, 0, sizeof(float) * nframes);
    for (jack_nframes_t i = 0; i < nframes; i++) {
        uint32_t frame = c.frames + i;
        if (frame % every == 0) out[i] = (float)(1 + (frame / every) % 255) / 256.0f;
    }
    uint64_t w = atomic_load_explicit(&written, memory_order_relaxed);
    if (w - atomic_load_explicit(&readIndex, memory_order_acquire) < RING) {
        ring[w % RING] = c;
        atomic_store_explicit(&written, w + 1, memory_order_release);
    }
    return 0;
}

static void stop(int signal_number) { (void)signal_number; done = 1; }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: clickprobe SERVER CLICK_EVERY LOGFILE\n"); return 2; }
    every = (uint32_t)strtoul(argv[2], NULL, 10);
    FILE *log = fopen(argv[3], "w");
    if (log == NULL || every == 0) { perror("clickprobe"); return 2; }
    jack_status_t status;
    client = jack_client_open("clickprobe", JackNoStartServer | JackServerName, &status, argv[1]);
    if (client == NULL) { fprintf(stderr, "clickprobe: no client (status 0x%x)\n", status); return 1; }
    port = jack_port_register(client, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    jack_set_process_callback(client, process, NULL);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    if (jack_activate(client) != 0) { fprintf(stderr, "clickprobe: cannot activate\n"); return 1; }
    fprintf(log, "# frames nframes usecs next_usecs monotonic_ns realtime_ns\n");
    fflush(log);
    printf("ready\n");
    fflush(stdout);
    while (!done) {
        uint64_t r = atomic_load_explicit(&readIndex, memory_order_relaxed);
        uint64_t w = atomic_load_explicit(&written, memory_order_acquire);
        for (; r < w; r++) {
            Cycle c = ring[r % RING];
            fprintf(log, "%u %u %llu %llu %lld %lld\n", c.frames, c.nframes, (unsigned long long)c.usecs,
                    (unsigned long long)c.next_usecs, (long long)c.monotonic, (long long)c.realtime);
        }
        atomic_store_explicit(&readIndex, r, memory_order_release);
        fflush(log);
        usleep(10000);
    }
    jack_deactivate(client);
    jack_client_close(client);
    fclose(log);
    return 0;
}
