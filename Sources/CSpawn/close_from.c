#define _GNU_SOURCE
#include <spawn.h>
#include "CSpawn.h"

int cspawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
