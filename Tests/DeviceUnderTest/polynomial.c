// polynomial: a device under test for the analyzer, a JACK client in its own
// process. `NAME:in` → `NAME:out` through the memoryless polynomial
// y = x + a2·x² + a3·x³, whose harmonic and intermodulation levels at a given
// amplitude are known in closed form. Computed in double, written as float.
//
// usage: polynomial SERVER NAME A2 A3   (prints "ready" once active; runs until SIGTERM)
#include <jack/jack.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static jack_port_t *in, *out;
static double a2, a3;
static volatile sig_atomic_t done;

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

static void stop(int signal_number) { (void)signal_number; done = 1; }

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: polynomial SERVER NAME A2 A3\n"); return 2; }
    a2 = atof(argv[3]);
    a3 = atof(argv[4]);
    jack_status_t status;
    jack_client_t *client = jack_client_open(argv[2], JackNoStartServer | JackServerName, &status, argv[1]);
    if (client == NULL) { fprintf(stderr, "polynomial: no client (status 0x%x)\n", status); return 1; }
    in = jack_port_register(client, "in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    out = jack_port_register(client, "out", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    jack_set_process_callback(client, process, NULL);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    if (jack_activate(client) != 0) { fprintf(stderr, "polynomial: cannot activate\n"); return 1; }
    printf("ready\n");
    fflush(stdout);
    while (!done) usleep(20000);
    jack_deactivate(client);
    jack_client_close(client);
    return 0;
}
