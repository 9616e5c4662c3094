// The C reference clients of `make bench`: a plain JACK passthrough, a
// capture client that interleaves into a ring as C recorders do, and a
// multiroute client copying its inputs to several output pairs.
#ifndef CREFERENCE_H
#define CREFERENCE_H

/// Runs a passthrough client with `channels` inputs and outputs on `server`
/// until `cycles` process callbacks have been timed into `durations`
/// (nanoseconds). Input N is connected to the Nth line of `sources`, output N
/// to the Nth line of `destinations` (port names, one per line); NULL means
/// `loopback:capture_N` and `loopback:playback_N`. Returns 0 on success.
int cref_passthrough_run(const char *server, int channels, int cycles, const char *sources, const char *destinations,
                         unsigned long long *durations);

/// Runs a capture client with `channels` inputs connected to `port_prefix`1,
/// `port_prefix`2, ...: each cycle it interleaves them into a jack_ringbuffer
/// that a reader thread empties, until `cycles` callbacks have been timed.
int cref_capture_run(const char *server, const char *port_prefix, int channels, int cycles,
                     unsigned long long *durations);

/// Runs a client with two inputs and `streams` stereo output pairs until
/// `cycles` callbacks have been timed. Each cycle output channel p gets the
/// next period of track p (`tracks`: 2 * `streams` channels of `track_frames`
/// frames, one after the other), or with `tracks` NULL a copy of input p % 2.
int cref_multiroute_run(const char *server, int streams, const float *tracks, int track_frames, int cycles,
                        unsigned long long *durations);

#endif
