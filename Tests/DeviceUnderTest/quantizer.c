// quantizer: a device under test for the analyzer, a JACK client in its own
// process. `NAME:in` → `NAME:out` requantized to BITS bits (full scale ±1,
// a step of 2^-(BITS-1)) with TPDF dither of ±1 step: its noise is white
// with a variance of a quarter step squared (digital silence in: a step
// of ±1 a quarter of the time), whatever the input, in closed form.
//
// usage: quantizer SERVER NAME BITS   (prints "ready" once active; runs until SIGTERM)
#include <math.h>
#include <stdint.h>

#include "device.h"

static jack_port_t *in, *out;
static double steps;  // steps per unit: 2^(BITS-1)
static uint64_t state = 0x9E3779B97F4A7C15ull;

// xorshift64*: uniform in [0, 1).
static double uniform(void) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (double)((state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    const float *x = jack_port_get_buffer(in, nframes);
    float *y = jack_port_get_buffer(out, nframes);
    for (jack_nframes_t i = 0; i < nframes; i++) {
        double dither = uniform() - uniform();  // triangular on (-1, 1) steps
        double level = floor(x[i] * steps + dither + 0.5);
        if (level > steps - 1) level = steps - 1;
        if (level < -steps) level = -steps;
        y[i] = (float)(level / steps);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: quantizer SERVER NAME BITS\n"); return 2; }
    steps = ldexp(1.0, atoi(argv[3]) - 1);
    jack_client_t *client = device_open("quantizer", argv[1], argv[2]);
    if (client == NULL) return 1;
    in = device_port(client, "in", 1);
    out = device_port(client, "out", 0);
    return device_run("quantizer", client, process);
}
