// The C reference for `make bench`: a plain JACK passthrough client that
// copies each input port to its output port, timing every process callback
// the same way the Swift session is timed (CLOCK_MONOTONIC around the work).
//
// cref_passthrough_run connects in_N to loopback:capture_N and out_N to
// loopback:playback_N (or to the ports it is given) and records CYCLES
// callback durations (nanoseconds).
// It is linked into the Swift benchmark (same process) and, with main.c,
// built as the standalone binary c-passthrough.
#include "CReference.h"
#include "reference_client.h"
#include <jack/jack.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHANNELS 256

static jack_port_t *inputs[MAX_CHANNELS];
static jack_port_t *outputs[MAX_CHANNELS];
static int channels;
static cycle_timer timer;

static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    unsigned long long start = cycle_timer_now();
    for (int c = 0; c < channels; c++) {
        float *in = jack_port_get_buffer(inputs[c], frames);
        float *out = jack_port_get_buffer(outputs[c], frames);
        memcpy(out, in, frames * sizeof(float));
    }
    cycle_timer_record(&timer, start);
    return 0;
}

/// Line `index` of `lines` (newline-separated) into `name`, or, with `lines`
/// NULL or too short, `fallback` followed by index + 1.
static void port_name(char *name, size_t size, const char *lines, int index, const char *fallback) {
    for (const char *line = lines; line; index--) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        if (index == 0 && length > 0) {
            snprintf(name, size, "%.*s", (int)length, line);
            return;
        }
        line = end ? end + 1 : NULL;
    }
    snprintf(name, size, "%s%d", fallback, index + 1);
}

int cref_passthrough_run(const char *server, int channel_count, int cycles, const char *sources,
                         const char *destinations, unsigned long long *out) {
    channels = channel_count;
    timer.capacity = cycles;
    if (channels < 1 || channels > MAX_CHANNELS || timer.capacity < 1) {
        fprintf(stderr, "c-passthrough: CHANNELS must be 1..%d and CYCLES positive\n", MAX_CHANNELS);
        return 2;
    }
    timer.durations = out;
    jack_client_t *client = reference_client_open("c-reference", server);
    if (!client) return 1;
    char name[64];
    for (int c = 0; c < channels; c++) {
        snprintf(name, sizeof name, "in_%d", c + 1);
        inputs[c] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        snprintf(name, sizeof name, "out_%d", c + 1);
        outputs[c] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    }
    jack_set_process_callback(client, process, NULL);
    if (jack_activate(client) != 0) {
        fprintf(stderr, "c-passthrough: cannot activate\n");
        jack_client_close(client);
        return 1;
    }
    char other[320];   // jack2's longest full port name (REAL_JACK_PORT_NAME_SIZE)
    for (int c = 0; c < channels; c++) {
        port_name(other, sizeof other, sources, c, "loopback:capture_");
        if (jack_connect(client, other, jack_port_name(inputs[c])) != 0)
            fprintf(stderr, "c-passthrough: cannot connect %s to %s\n", other, jack_port_name(inputs[c]));
        port_name(other, sizeof other, destinations, c, "loopback:playback_");
        if (jack_connect(client, jack_port_name(outputs[c]), other) != 0)
            fprintf(stderr, "c-passthrough: cannot connect %s to %s\n", jack_port_name(outputs[c]), other);
    }
    reference_client_time_and_close(client, &timer);
    return 0;
}
