// leakage: a device under test for the analyzer, a JACK client in its own
// process: two channels, `NAME:in_1/2` → `NAME:out_1/2`, each passed straight
// and leaking into the other by FLAT (a gain) plus BAND (a gain) through a
// band-pass biquad (b0 b1 b2 a1 a2, from scipy), in double:
//   out_1 = in_1 + FLAT·in_2 + BAND·bp(in_2), and the same the other way.
//
// usage: leakage SERVER NAME FLAT BAND b0 b1 b2 a1 a2   (prints "ready" once active; runs until SIGTERM)
#include "device.h"

static jack_port_t *in[2], *out[2];
static double flat, band, c[5], state[2][2];

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

int main(int argc, char **argv) {
    if (argc != 10) { fprintf(stderr, "usage: leakage SERVER NAME FLAT BAND b0 b1 b2 a1 a2\n"); return 2; }
    flat = atof(argv[3]);
    band = atof(argv[4]);
    for (int k = 0; k < 5; k++) c[k] = atof(argv[5 + k]);
    jack_client_t *client = device_open("leakage", argv[1], argv[2]);
    if (client == NULL) return 1;
    in[0] = device_port(client, "in_1", 1);
    in[1] = device_port(client, "in_2", 1);
    out[0] = device_port(client, "out_1", 0);
    out[1] = device_port(client, "out_2", 0);
    return device_run("leakage", client, process);
}
