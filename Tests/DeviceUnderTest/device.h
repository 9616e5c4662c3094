// What every device under test does around its process callback: open a
// JACK client NAME on SERVER (never starting a server), register its ports,
// activate, say "ready" on stdout, run until SIGTERM or SIGINT, and close.
// Each device is one .c file that includes this and gives its callback.
#ifndef DEVICE_H
#define DEVICE_H

#include <jack/jack.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t device_done;

static void device_stop(int signal_number) { (void)signal_number; device_done = 1; }

// Opens the client `name` on `server` for `program` (messages name it); NULL after saying why.
static jack_client_t *device_open(const char *program, const char *server, const char *name) {
    jack_status_t status;
    jack_client_t *client = jack_client_open(name, JackNoStartServer | JackServerName, &status, server);
    if (client == NULL) fprintf(stderr, "%s: no client (status 0x%x)\n", program, status);
    return client;
}

// An audio port of the client: an input when `input`, else an output.
static jack_port_t *device_port(jack_client_t *client, const char *name, int input) {
    return jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, input ? JackPortIsInput : JackPortIsOutput, 0);
}

// Runs `process` until SIGTERM or SIGINT: activates, says "ready", waits, closes. The exit status.
static int device_run(const char *program, jack_client_t *client, JackProcessCallback process) {
    jack_set_process_callback(client, process, NULL);
    signal(SIGTERM, device_stop);
    signal(SIGINT, device_stop);
    if (jack_activate(client) != 0) { fprintf(stderr, "%s: cannot activate\n", program); return 1; }
    printf("ready\n");
    fflush(stdout);
    while (!device_done) usleep(20000);
    jack_deactivate(client);
    jack_client_close(client);
    return 0;
}

#endif
