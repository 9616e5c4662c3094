// The C reference for the multiroute part of `make bench`: a JACK client
// with two inputs and STREAMS stereo output pairs. Each cycle every pair gets
// the next period of its own track (a DJ's decks: TRACKS holds 2 * STREAMS
// channels of TRACK_FRAMES frames each), or, with no tracks, a copy of the
// two inputs; as the Swift multiRoute session does. Timed like the Swift
// session (CLOCK_MONOTONIC around the work).
//
// Connects in_1/in_2 to loopback:capture_1/2 and pair s to
// loopback:playback_(2s+1)/(2s+2).
#include "CReference.h"
#include "reference_client.h"
#include <jack/jack.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_STREAMS 64

static jack_port_t *inputs[2];
static jack_port_t *outputs[2 * MAX_STREAMS];
static int streams;
static const float *tracks;
static int track_frames;
static int position;
static cycle_timer timer;

static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    unsigned long long start = cycle_timer_now();
    float *in[2] = { jack_port_get_buffer(inputs[0], frames), jack_port_get_buffer(inputs[1], frames) };
    if (position + (int)frames > track_frames) position = 0;
    for (int p = 0; p < 2 * streams; p++) {
        const float *source = tracks ? tracks + (size_t)p * track_frames + position : in[p % 2];
        memcpy(jack_port_get_buffer(outputs[p], frames), source, frames * sizeof(float));
    }
    position += frames;
    cycle_timer_record(&timer, start);
    return 0;
}

int cref_multiroute_run(const char *server, int stream_count, const float *track_samples, int frames_per_track,
                        int cycles, unsigned long long *out) {
    streams = stream_count;
    tracks = track_samples;
    track_frames = frames_per_track;
    position = 0;
    timer.capacity = cycles;
    if (streams < 1 || streams > MAX_STREAMS || cycles < 1) {
        fprintf(stderr, "c-multiroute: STREAMS must be 1..%d and CYCLES positive\n", MAX_STREAMS);
        return 2;
    }
    timer.durations = out;
    jack_client_t *client = reference_client_open("c-multiroute", server);
    if (!client) return 1;
    char name[64];
    for (int c = 0; c < 2; c++) {
        snprintf(name, sizeof name, "in_%d", c + 1);
        inputs[c] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    }
    for (int p = 0; p < 2 * streams; p++) {
        snprintf(name, sizeof name, "s%d_%c", p / 2 + 1, p % 2 ? 'R' : 'L');
        outputs[p] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    }
    jack_set_process_callback(client, process, NULL);
    if (jack_activate(client) != 0) {
        fprintf(stderr, "c-multiroute: cannot activate\n");
        jack_client_close(client);
        return 1;
    }
    char other[128];
    for (int c = 0; c < 2; c++) {
        snprintf(other, sizeof other, "loopback:capture_%d", c + 1);
        jack_connect(client, other, jack_port_name(inputs[c]));
    }
    for (int p = 0; p < 2 * streams; p++) {
        snprintf(other, sizeof other, "loopback:playback_%d", p + 1);
        jack_connect(client, jack_port_name(outputs[p]), other);
    }
    reference_client_time_and_close(client, &timer);
    return 0;
}
