// The C reference client of `make bench`: a plain JACK passthrough.
#ifndef CREFERENCE_H
#define CREFERENCE_H

/// Runs a passthrough client with `channels` inputs and outputs on `server`
/// until `cycles` process callbacks have been timed into `durations`
/// (nanoseconds). Returns 0 on success.
int cref_passthrough_run(const char *server, int channels, int cycles, unsigned long long *durations);

#endif
