// The C reference clients of `make bench`: a plain JACK passthrough, and a
// capture client that interleaves into a ring as C recorders do.
#ifndef CREFERENCE_H
#define CREFERENCE_H

/// Runs a passthrough client with `channels` inputs and outputs on `server`
/// until `cycles` process callbacks have been timed into `durations`
/// (nanoseconds). Returns 0 on success.
int cref_passthrough_run(const char *server, int channels, int cycles, unsigned long long *durations);

/// Runs a capture client with `channels` inputs connected to `port_prefix`1,
/// `port_prefix`2, ...: each cycle it interleaves them into a jack_ringbuffer
/// that a reader thread empties, until `cycles` callbacks have been timed.
int cref_capture_run(const char *server, const char *port_prefix, int channels, int cycles,
                     unsigned long long *durations);

#endif
