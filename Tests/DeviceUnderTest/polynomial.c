// polynomial: a device under test for the analyzer, a JACK client in its own
// process. `NAME:in` → `NAME:out` through the memoryless polynomial
// y = x + a2·x² + a3·x³, whose harmonic and intermodulation levels at a given
// amplitude are known in closed form. Computed in double, written as float.
//
// usage: polynomial SERVER NAME A2 A3   (prints "ready" once active; runs until SIGTERM)
#include "device.h"

static jack_port_t *in, *out;
static double a2, a3;

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    const float *x = jack_port_get_buffer(in, nframes);
    float *y = jack_port_get_buffer(out, nframes);
    for (jack_nframes_t i = 0; i < nframes; i++) {
        double v = x[i];
        y[i] = (float)(v + a2 * v * v + a3 * v * v * v);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: polynomial SERVER NAME A2 A3\n"); return 2; }
    a2 = atof(argv[3]);
    a3 = atof(argv[4]);
    jack_client_t *client = device_open("polynomial", argv[1], argv[2]);
    if (client == NULL) return 1;
    in = device_port(client, "in", 1);
    out = device_port(client, "out", 0);
    return device_run("polynomial", client, process);
}
