// leakage: a device under test for the analyzer, a JACK client in its own
// process: two channels, `NAME:in_1/2` → `NAME:out_1/2`, each passed straight
// and leaking into the other by FLAT (a gain) plus BAND (a gain) through a
// band-pass biquad (b0 b1 b2 a1 a2, from scipy), in double:
//   out_1 = in_1 + FLAT·in_2 + BAND·bp(in_2), and the same the other way.
//
// usage: leakage SERVER NAME FLAT BAND b0 b1 b2 a1 a2   (prints "ready" once active; runs until SIGTERM)
#include <jack/jack.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static jack_port_t *in[2], *out[2];
static double flat, band, c[5], state[2][2];
static volatile sig_atomic_t done;

static double bandpass(int channel, double x) {
    double y = c[0] * x + state[channel][0];
    state[channel][0] = c[1] * x - c[3] * y + state[channel][1];
    state[channel][1] = c[2] * x - c[4] * y;
    return y;
}

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    const float *x[2] = {jack_port_get_buffer(in[0], nframes), jack_port_get_buffer(in[1], nframes)};
    float *y[2] = {jack_port_get_buffer(out[0], nframes), jack_port_get_buffer(out[1], nframes)};
    for (jack_nframes_t i = 0; i < nframes; i++) {
        double a = x[0][i], b = x[1][i];
        double into_first = flat * b + band * bandpass(1, b), into_second = flat * a + band * bandpass(0, a);
        y[0][i] = (float)(a + into_first);
        y[1][i] = (float)(b + into_second);
    }
    return 0;
}

static void stop(int signal_number) { (void)signal_number; done = 1; }

int main(int argc, char **argv) {
    if (argc != 10) { fprintf(stderr, "usage: leakage SERVER NAME FLAT BAND b0 b1 b2 a1 a2\n"); return 2; }
    flat = atof(argv[3]);
    band = atof(argv[4]);
    for (int k = 0; k < 5; k++) c[k] = atof(argv[5 + k]);
    jack_status_t status;
    jack_client_t *client = jack_client_open(argv[2], JackNoStartServer | JackServerName, &status, argv[1]);
    if (client == NULL) { fprintf(stderr, "leakage: no client (status 0x%x)\n", status); return 1; }
    in[0] = jack_port_register(client, "in_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    in[1] = jack_port_register(client, "in_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    out[0] = jack_port_register(client, "out_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    out[1] = jack_port_register(client, "out_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    jack_set_process_callback(client, process, NULL);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    if (jack_activate(client) != 0) { fprintf(stderr, "leakage: cannot activate\n"); return 1; }
    printf("ready\n");
    fflush(stdout);
    while (!done) usleep(20000);
    jack_deactivate(client);
    jack_client_close(client);
    return 0;
}
