// What the C reference clients do alike around their process callback:
// open a client on a named server, and time cycles until the table is full.
#ifndef REFERENCE_CLIENT_H
#define REFERENCE_CLIENT_H

#include "cycle_timer.h"
#include <jack/jack.h>
#include <stdio.h>
#include <unistd.h>

/// Opens a client `name` on `server` (never starting a server); NULL, with a
/// message on stderr naming the server, when it cannot.
static inline jack_client_t *reference_client_open(const char *name, const char *server) {
    jack_status_t status;
    jack_client_t *client = jack_client_open(name, JackNoStartServer | JackServerName, &status, server);
    if (!client) fprintf(stderr, "%s: cannot open a client on server '%s' (status 0x%x)\n", name, server, status);
    return client;
}

/// Starts timing from the next cycle (the cycles around activation and
/// connection are discarded), waits until `timer` is full, then deactivates
/// and closes `client`.
static inline void reference_client_time_and_close(jack_client_t *client, cycle_timer *timer) {
    atomic_store(&timer->recorded, 0);
    while (!cycle_timer_full(timer)) usleep(10000);
    jack_deactivate(client);
    jack_client_close(client);
}

#endif
