// The C reference for the recording benchmark: what a C capture client such
// as jack_capture does in its process callback, timed the same way as the
// Swift session (CLOCK_MONOTONIC around the work): interleave every input
// port into one block and write it to a jack_ringbuffer, and wake the
// reader thread that empties the ring as jack2's capture_client example does
// (a condition signalled when a try-lock of its mutex succeeds, which it does
// while the reader waits). cref_capture_run connects in_N to PORT_PREFIX N
// and records CYCLES callback durations (nanoseconds).
#include "CReference.h"
#include "reference_client.h"
#include <jack/jack.h>
#include <jack/ringbuffer.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHANNELS 256
#define MAX_FRAMES 8192

static jack_port_t *inputs[MAX_CHANNELS];
static int channels;
static float *interleaved;
static jack_ringbuffer_t *ring;
static cycle_timer timer;
static atomic_int running;
static pthread_mutex_t reader_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t data_ready = PTHREAD_COND_INITIALIZER;

static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    unsigned long long start = cycle_timer_now();
    for (int c = 0; c < channels; c++) {
        const float *in = jack_port_get_buffer(inputs[c], frames);
        for (jack_nframes_t f = 0; f < frames; f++) interleaved[f * channels + c] = in[f];
    }
    size_t bytes = (size_t)frames * channels * sizeof(float);
    if (jack_ringbuffer_write_space(ring) >= bytes) jack_ringbuffer_write(ring, (const char *)interleaved, bytes);
    if (pthread_mutex_trylock(&reader_lock) == 0) {
        pthread_cond_signal(&data_ready);
        pthread_mutex_unlock(&reader_lock);
    }
    cycle_timer_record(&timer, start);
    return 0;
}

static void *drain(void *arg) {
    (void)arg;
    static char scratch[1 << 16];
    pthread_mutex_lock(&reader_lock);
    while (atomic_load(&running)) {
        while (jack_ringbuffer_read(ring, scratch, sizeof scratch) > 0) {}
        // Also woken at the end (`running` cleared), or after 0.1 s without cycles.
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100000000;
        if (until.tv_nsec >= 1000000000) { until.tv_sec += 1; until.tv_nsec -= 1000000000; }
        pthread_cond_timedwait(&data_ready, &reader_lock, &until);
    }
    pthread_mutex_unlock(&reader_lock);
    return NULL;
}

int cref_capture_run(const char *server, const char *port_prefix, int channel_count, int cycles,
                     unsigned long long *out) {
    channels = channel_count;
    timer.capacity = cycles;
    if (channels < 1 || channels > MAX_CHANNELS || timer.capacity < 1) return 2;
    timer.durations = out;
    interleaved = calloc((size_t)MAX_FRAMES * channels, sizeof(float));
    ring = jack_ringbuffer_create((size_t)48000 * 4 * channels * sizeof(float));
    // Touch every page now, as the Swift ring does, so the callback never faults one in.
    memset(ring->buf, 0, ring->size);
    jack_client_t *client = reference_client_open("c-capture", server);
    if (!client) return 1;
    char name[160];
    for (int c = 0; c < channels; c++) {
        snprintf(name, sizeof name, "in_%d", c + 1);
        inputs[c] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    }
    jack_set_process_callback(client, process, NULL);
    atomic_store(&running, 1);
    pthread_t reader;
    pthread_create(&reader, NULL, drain, NULL);
    if (jack_activate(client) != 0) {
        jack_client_close(client);
        return 1;
    }
    for (int c = 0; c < channels; c++) {
        snprintf(name, sizeof name, "%s%d", port_prefix, c + 1);
        jack_connect(client, name, jack_port_name(inputs[c]));
    }
    reference_client_time_and_close(client, &timer);
    atomic_store(&running, 0);
    pthread_join(reader, NULL);
    jack_ringbuffer_free(ring);
    free(interleaved);
    return 0;
}
