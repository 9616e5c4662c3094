// iir: a device under test for the analyzer, a JACK client in its own
// process. `NAME:in` → `NAME:out` through a cascade of biquads (second-order
// sections, direct form II transposed, in double), whose response is what
// scipy.signal's sosfreqz says of the same coefficients.
//
// usage: iir SERVER NAME b0 b1 b2 a1 a2 [b0 b1 b2 a1 a2 ...]   (a0 = 1; prints "ready"; runs until SIGTERM)
#include <jack/jack.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_SECTIONS 16

static jack_port_t *in, *out;
static double coefficients[MAX_SECTIONS][5], state[MAX_SECTIONS][2];
static int sections;
static volatile sig_atomic_t done;

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    const float *x = jack_port_get_buffer(in, nframes);
    float *y = jack_port_get_buffer(out, nframes);
    for (jack_nframes_t i = 0; i < nframes; i++) {
        double v = x[i];
        for (int s = 0; s < sections; s++) {
            const double *c = coefficients[s];
            double w = c[0] * v + state[s][0];
            state[s][0] = c[1] * v - c[3] * w + state[s][1];
            state[s][1] = c[2] * v - c[4] * w;
            v = w;
        }
        y[i] = (float)v;
    }
    return 0;
}

static void stop(int signal_number) { (void)signal_number; done = 1; }

int main(int argc, char **argv) {
    if (argc < 8 || (argc - 3) % 5 != 0 || (argc - 3) / 5 > MAX_SECTIONS) {
        fprintf(stderr, "usage: iir SERVER NAME b0 b1 b2 a1 a2 [b0 b1 b2 a1 a2 ...]\n");
        return 2;
    }
    sections = (argc - 3) / 5;
    for (int s = 0; s < sections; s++)
        for (int k = 0; k < 5; k++) coefficients[s][k] = atof(argv[3 + 5 * s + k]);
    jack_status_t status;
    jack_client_t *client = jack_client_open(argv[2], JackNoStartServer | JackServerName, &status, argv[1]);
    if (client == NULL) { fprintf(stderr, "iir: no client (status 0x%x)\n", status); return 1; }
    in = jack_port_register(client, "in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    out = jack_port_register(client, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    jack_set_process_callback(client, process, NULL);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    if (jack_activate(client) != 0) { fprintf(stderr, "iir: cannot activate\n"); return 1; }
    printf("ready\n");
    fflush(stdout);
    while (!done) usleep(20000);
    jack_deactivate(client);
    jack_client_close(client);
    return 0;
}
