// LD_PRELOAD for tests: with HOLD_JACK_BIND_MS set, a bind(2) of a JACK
// client's notification socket (a path with "/jack_" and the name in
// HOLD_JACK_BIND_NAME) returns only after that many milliseconds, so the
// moment between binding the socket and the server connecting to it, in
// which another process opening a client of the same name takes the socket
// path, lasts long enough to be certain.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int bind(int fd, const struct sockaddr *address, socklen_t length) {
    int (*real)(int, const struct sockaddr *, socklen_t) = dlsym(RTLD_NEXT, "bind");
    int result = real(fd, address, length);
    const char *hold = getenv("HOLD_JACK_BIND_MS");
    const char *name = getenv("HOLD_JACK_BIND_NAME");
    if (result == 0 && hold != NULL && name != NULL && address->sa_family == AF_UNIX) {
        const char *path = ((const struct sockaddr_un *)address)->sun_path;
        if (strstr(path, "/jack_") != NULL && strstr(path, name) != NULL) usleep((useconds_t)atoi(hold) * 1000);
    }
    return result;
}
