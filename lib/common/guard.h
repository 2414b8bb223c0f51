/*
 * guard.h - mapped inputs that survive truncation and runtime child
 * processes ended on SIGINT/SIGTERM/SIGHUP (guard.c).  Private to libnbg;
 * programs call nbg_install_signal_guards() and nbg_mapping_changed() from
 * nbg/nbg.h.
 */
#ifndef NBG_COMMON_GUARD_H
#define NBG_COMMON_GUARD_H

#include <stddef.h>
#include <sys/types.h>

#include "common/internal.h"

/* A new read-only mapping [base, base+len) to protect. */
NBG_INTERNAL void nbg_guard_map_add(const void *base, size_t len);
/* Forgets the mapping at base (before munmap); returns whether it changed. */
NBG_INTERNAL int nbg_guard_map_remove(const void *base);
/* 1 once nbg_install_signal_guards() or nbg_install_sigbus_guard() ran: a
 * mapping that shrinks reads zeros instead of raising SIGBUS. */
NBG_INTERNAL int nbg_guard_installed(void);
/* Registers a running child process to which SIGINT, SIGTERM and SIGHUP
 * are passed on (after nbg_install_signal_guards), the handler waiting
 * until it has ended; returns the slot for nbg_guard_child_remove (call it
 * before reaping the child), or -1. */
NBG_INTERNAL int nbg_guard_child_add(pid_t pid);
NBG_INTERNAL void nbg_guard_child_remove(int slot);

#endif
