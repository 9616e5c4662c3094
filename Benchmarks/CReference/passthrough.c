// The C reference for `make bench`: a plain JACK passthrough client that
// copies each input port to its output port, timing every process callback
// the same way the Swift session is timed (CLOCK_MONOTONIC around the work).
//
// cref_passthrough_run connects in_N to loopback:capture_N and out_N to
// loopback:playback_N and records CYCLES callback durations (nanoseconds).
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

int cref_passthrough_run(const char *server, int channel_count, int cycles, unsigned long long *out) {
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
    char other[128];
    for (int c = 0; c < channels; c++) {
        snprintf(other, sizeof other, "loopback:capture_%d", c + 1);
        jack_connect(client, other, jack_port_name(inputs[c]));
        snprintf(other, sizeof other, "loopback:playback_%d", c + 1);
        jack_connect(client, jack_port_name(outputs[c]), other);
    }
    reference_client_time_and_close(client, &timer);
    return 0;
}
