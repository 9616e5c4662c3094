// iir: a device under test for the analyzer, a JACK client in its own
// process. `NAME:in` → `NAME:out` through a cascade of biquads (second-order
// sections, direct form II transposed, in double), whose response is what
// scipy.signal's sosfreqz says of the same coefficients.
//
// usage: iir SERVER NAME b0 b1 b2 a1 a2 [b0 b1 b2 a1 a2 ...]   (a0 = 1; prints "ready"; runs until SIGTERM)
#include "device.h"

#define MAX_SECTIONS 16

static jack_port_t *in, *out;
static double coefficients[MAX_SECTIONS][5], state[MAX_SECTIONS][2];
static int sections;

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

int main(int argc, char **argv) {
    if (argc < 8 || (argc - 3) % 5 != 0 || (argc - 3) / 5 > MAX_SECTIONS) {
        fprintf(stderr, "usage: iir SERVER NAME b0 b1 b2 a1 a2 [b0 b1 b2 a1 a2 ...]\n");
        return 2;
    }
    sections = (argc - 3) / 5;
    for (int s = 0; s < sections; s++)
        for (int k = 0; k < 5; k++) coefficients[s][k] = atof(argv[3 + 5 * s + k]);
    jack_client_t *client = device_open("iir", argv[1], argv[2]);
    if (client == NULL) return 1;
    in = device_port(client, "in", 1);
    out = device_port(client, "out", 0);
    return device_run("iir", client, process);
}
