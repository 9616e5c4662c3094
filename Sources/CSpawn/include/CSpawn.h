#ifndef CSPAWN_H
#define CSPAWN_H

#include <spawn.h>

/// Adds to `actions` the closing of every descriptor from `lowest` up in the
/// child (glibc's posix_spawn_file_actions_addclosefrom_np, 2.34 and later,
/// which Swift's Glibc module does not show). 0, or an errno value.
int cspawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
