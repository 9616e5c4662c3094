// The notification thread of a libjack client, seen through /proc.
//
// jack2's libjack kills a client's notification thread with an asynchronous
// pthread_cancel when the client closes; cancelled while it handles a client
// arriving or leaving, it leaves a process-wide mutex locked for ever (jack2
// #395). JackKit therefore closes a client only once that thread has exited or
// is blocked in read() on its socket. These helpers find the thread when the
// client opens (threads inherit the name of the thread that creates them) and
// tell what it is doing.
#define _GNU_SOURCE
#include "CJack.h"
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CJACK_OPEN_MARK "jackkit-opening"

static int read_task_file(int tid, const char *file, char *buffer, size_t size) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, file);
    FILE *stream = fopen(path, "re");
    if (stream == NULL) return -1;
    size_t count = fread(buffer, 1, size - 1, stream);
    fclose(stream);
    buffer[count] = 0;
    return (int)count;
}

// In read() is quiet only while nothing is waiting on the descriptor it reads
// (the first argument in /proc's syscall line): a notification already sent
// wakes the thread, which then takes libjack's synchronisation mutex to handle
// it, and a cancellation then leaves that mutex locked.
int cjack_thread_state(int tid) {
    char text[256];
    if (read_task_file(tid, "syscall", text, sizeof text) < 0) return CJACK_THREAD_GONE;
    char *end = NULL;
    long number = strtol(text, &end, 10);
    if (end == text || number != SYS_read) return CJACK_THREAD_BUSY;
    char *after = NULL;
    unsigned long descriptor = strtoul(end, &after, 16);
    int waiting = 0;
    if (after == end || ioctl((int)descriptor, FIONREAD, &waiting) != 0) return CJACK_THREAD_IN_READ;
    return waiting == 0 ? CJACK_THREAD_IN_READ : CJACK_THREAD_BUSY;
}

int cjack_current_tid(void) {
    return (int)syscall(SYS_gettid);
}

// Renames the threads that carry the mark: the newest one (the notification
// thread, started last by jack_client_open) "jack-notify", the others
// (libjack's message thread on a process's first open) "jack-library".
// Returns the newest one's tid, or 0.
static int rename_marked_threads(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return 0;
    int marked[16];
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL && count < 16) {
        int tid = atoi(entry->d_name);
        char name[32];
        if (tid <= 0 || read_task_file(tid, "comm", name, sizeof name) < 0) continue;
        if (strncmp(name, CJACK_OPEN_MARK, strlen(CJACK_OPEN_MARK)) == 0) marked[count++] = tid;
    }
    closedir(tasks);
    int newest = 0;
    for (int i = 0; i < count; i++) if (marked[i] > newest) newest = marked[i];
    for (int i = 0; i < count; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%d/comm", marked[i]);
        FILE *stream = fopen(path, "we");
        if (stream == NULL) continue;
        fputs(marked[i] == newest ? "jack-notify" : "jack-library", stream);
        fclose(stream);
    }
    return newest;
}

jack_client_t *cjack_client_open_watched(const char *client_name, jack_options_t options,
                                         jack_status_t *status, const char *server_name,
                                         int *notification_tid) {
    char saved[32] = {0};
    prctl(PR_GET_NAME, saved);
    prctl(PR_SET_NAME, CJACK_OPEN_MARK);
    jack_client_t *client = cjack_client_open(client_name, options, status, server_name);
    prctl(PR_SET_NAME, saved);
    int tid = rename_marked_threads();
    *notification_tid = 0;
    if (client == NULL || tid == 0) return client;
    // jack2's notification thread waits in read() on its socket as soon as the
    // open has returned; a thread that never does (PipeWire's libjack has no
    // such thread) is not one to wait for.
    for (int attempt = 0; attempt < 200; attempt++) {
        int state = cjack_thread_state(tid);
        if (state == CJACK_THREAD_IN_READ) {
            *notification_tid = tid;
            break;
        }
        if (state == CJACK_THREAD_GONE) break;
        usleep(1000);
    }
    return client;
}
